import { pipeline } from 'node:stream/promises';
import { NotFoundError, type ProviderDownload, type ProviderFile } from '@trellis/core';
import express, { type Request, type Router } from 'express';
import { problemErrorHandler } from '../../errors/problem.js';
import { actorOf } from '../../tfe/tfeAuth.js';
import { REGISTRY_BASES, type RegistryProtocol, type RegistryProtocolDeps } from '../registryProtocols.js';

/** The signed object of one file of a version: its zip, `SHA256SUMS` or the signature. */
export function providerFileObject(ownerId: string, versionId: string, name: string): string {
  return `/_signed/registry/providers/${ownerId}/${versionId}/${name}`;
}

const SHASUMS = 'SHA256SUMS';
const SIGNATURE = 'SHA256SUMS.sig';

function fileOfName(name: string): ProviderFile | null {
  if (name === SHASUMS) return { kind: 'shasums' };
  if (name === SIGNATURE) return { kind: 'signature' };
  const zip = /^([a-z0-9]+)_([a-z0-9]+)\.zip$/.exec(name);
  return zip ? { kind: 'zip', os: zip[1] as string, arch: zip[2] as string } : null;
}

/** The download answer of `providers.v1`, every URL signed and short-lived (the CLI sends no token there). */
function downloadAnswer(deps: RegistryProtocolDeps, req: Request, found: ProviderDownload) {
  const { version, platform } = found;
  const url = (name: string) =>
    deps.publicOrigin(req) +
    deps.signer.path('GET', providerFileObject(found.owner_id, version.id, name), deps.signedUrlSeconds);
  return {
    protocols: version.protocols,
    os: platform.os,
    arch: platform.arch,
    filename: platform.filename,
    download_url: url(`${platform.os}_${platform.arch}.zip`),
    shasums_url: url(SHASUMS),
    shasums_signature_url: url(SIGNATURE),
    shasum: platform.shasum,
    signing_keys: {
      gpg_public_keys: found.keys.map((key) => ({
        key_id: key.key_id,
        ascii_armor: key.ascii_armor,
        trust_signature: '',
        source: '',
        source_url: null,
      })),
    },
  };
}

/**
 * The provider registry protocol of the stock CLI (`providers.v1`, issue 28): the versions of a
 * provider and the download answer of a platform, authenticated by the bearer token `tofu login`
 * stored, like the Terraform Cloud API; and the signed URLs the CLI fetches the zip, `SHA256SUMS`
 * and its signature from (it sends no token there). Errors are problem+json; the CLI reads only
 * their status.
 */
export const providersProtocol: RegistryProtocol = {
  service: 'providers.v1',
  base: REGISTRY_BASES.providers,
  routes(deps: RegistryProtocolDeps): Router {
    const router = express.Router();
    const providers = deps.useCases.registryProviders;
    router.get('/:namespace/:type/versions', deps.authenticate, async (req, res) => {
      const versions = await providers.versions(actorOf(res), String(req.params.namespace), req.params.type);
      res.setHeader('Cache-Control', 'no-store');
      res.json({
        versions: versions
          .map((version) => ({
            version: version.version,
            protocols: version.protocols,
            platforms: version.platforms
              .filter((platform) => platform.uploaded)
              .map((platform) => ({ os: platform.os, arch: platform.arch })),
          }))
          // A version with no zip yet cannot be installed: the CLI never sees it.
          .filter((version) => version.platforms.length > 0),
      });
    });
    router.get('/:namespace/:type/:version/download/:os/:arch', deps.authenticate, async (req, res) => {
      const [namespace, type, version, os, arch] = ['namespace', 'type', 'version', 'os', 'arch'].map((name) =>
        String(req.params[name]),
      ) as [string, string, string, string, string];
      const found = await providers.download(actorOf(res), namespace, type, version, os, arch);
      res.setHeader('Cache-Control', 'no-store');
      res.json(downloadAnswer(deps, req, found));
    });
    router.use(problemErrorHandler(deps.logger));
    return router;
  },
  signed(deps: RegistryProtocolDeps): Router {
    const router = express.Router();
    router.get('/registry/providers/:owner/:version/:name', async (req, res) => {
      const [owner, version, name] = [req.params.owner, req.params.version, req.params.name].map(String) as [
        string,
        string,
        string,
      ];
      deps.signer.verify('GET', providerFileObject(owner, version, name), req.query);
      const file = fileOfName(name);
      if (!file) throw new NotFoundError('provider_platform', 'provider_platform_not_found');
      const opened = await deps.useCases.registryProviders.openFile(owner, version, file);
      res.status(200);
      res.setHeader('Content-Type', file.kind === 'zip' ? 'application/zip' : 'application/octet-stream');
      res.setHeader('Content-Length', String(opened.size));
      res.setHeader('Content-Disposition', `attachment; filename="${opened.filename}"`);
      res.setHeader('Cache-Control', 'no-store');
      if (opened.body instanceof Uint8Array) {
        res.end(Buffer.from(opened.body));
        return;
      }
      await pipeline(opened.body, res);
    });
    return router;
  },
};
