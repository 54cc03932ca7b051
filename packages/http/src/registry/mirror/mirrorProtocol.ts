import { pipeline } from 'node:stream/promises';
import {
  archiveFileName,
  type MirrorArchive,
  type MirrorPullTarget,
  NotFoundError,
  parsePlatform,
} from '@trellis/core';
import express, { type Request, type Response } from 'express';
import { registryActorOf } from '../registryAuth.js';
import { REGISTRY_BASES, type RegistryProtocol, type RegistryProtocolDeps } from '../registryProtocols.js';

/** The object a signed URL of an archive is bound to (under the protocol's `/_signed` routes). */
export function mirrorArchiveObject(ownerId: string, id: string): string {
  return `/_signed/registry-mirror/${ownerId}/${id}`;
}

function archiveUrl(deps: RegistryProtocolDeps, req: Request, archive: MirrorArchive): string {
  const signed = deps.signer.path('GET', mirrorArchiveObject(archive.owner_id, archive.id), deps.signedUrlSeconds);
  // The file name after the signed object helps people reading logs; the signature covers the object.
  const [object, query] = signed.split('?');
  return `${deps.publicOrigin(req)}${object}/${archiveFileName(archive)}?${query}`;
}

/** The object a pull URL is bound to; the archive's address rides in its signed claims. */
export function mirrorPullObject(ownerId: string, sha256: string): string {
  return `/_signed/registry-mirror-pull/${ownerId}/${sha256}`;
}

/**
 * A URL that pulls an archive from its origin registry into the mirror when fetched, then
 * redirects to it: signed and short-lived like an archive's, its address and sha256 signed too.
 */
function pullUrl(deps: RegistryProtocolDeps, req: Request, target: MirrorPullTarget): string {
  const claims = {
    hostname: target.hostname,
    namespace: target.namespace,
    type: target.type,
    version: target.version,
    platform: `${target.os}_${target.arch}`,
  };
  const signed = deps.signer.path(
    'GET',
    mirrorPullObject(target.owner_id, target.sha256),
    deps.signedUrlSeconds,
    claims,
  );
  const [object, query] = signed.split('?');
  return `${deps.publicOrigin(req)}${object}/${archiveFileName(target)}?${query}`;
}

function sendJson(res: Response, body: unknown): void {
  res.setHeader('Cache-Control', 'no-store');
  res.status(200).json(body);
}

/**
 * The Provider Network Mirror Protocol (OpenTofu's `network_mirror`), per namespace:
 * `<base><namespace>/<hostname>/<namespace>/<type>/index.json` lists the versions,
 * `…/<version>.json` each platform's archive (a signed, short-lived URL: the CLI sends no
 * token there) with its `h1:` and `zh:` hashes. Read with `registry.read`, by a person's token
 * or a running job's.
 */
export const mirrorProtocol: RegistryProtocol = {
  base: REGISTRY_BASES.mirror,
  routes(deps) {
    const router = express.Router();
    router.get('/:namespace/:hostname/:providerNamespace/:type/:file', deps.authenticate, async (req, res) => {
      const file = String(req.params.file);
      if (!file.endsWith('.json')) throw new NotFoundError('route', 'route_not_found', 'no such mirror document');
      const provider = {
        hostname: String(req.params.hostname),
        namespace: String(req.params.providerNamespace),
        type: String(req.params.type),
      };
      const actor = registryActorOf(res);
      const mirror = deps.useCases.mirror;
      const warn = (failure: Error | null) => {
        if (failure) {
          deps.logger.warn(
            { provider: `${provider.hostname}/${provider.namespace}/${provider.type}`, detail: failure.message },
            'the upstream registry failed; the mirror serves what it holds',
          );
        }
      };
      if (file === 'index.json') {
        const { versions, upstreamFailure } = await mirror.versions(actor, req.params.namespace, provider);
        warn(upstreamFailure);
        sendJson(res, { versions: Object.fromEntries(versions.map((version) => [version, {}])) });
        return;
      }
      const version = file.slice(0, -'.json'.length);
      const { archives, upstreamFailure } = await mirror.version(actor, req.params.namespace, provider, version, {
        archive: (archive) => archiveUrl(deps, req, archive),
        pull: (target) => pullUrl(deps, req, target),
      });
      warn(upstreamFailure);
      sendJson(res, { archives });
    });
    return router;
  },
  signed(deps) {
    const router = express.Router();
    router.get('/registry-mirror/:owner/:id/:filename', async (req, res) => {
      const owner = String(req.params.owner);
      const id = String(req.params.id);
      deps.signer.verify('GET', mirrorArchiveObject(owner, id), req.query);
      const { archive, body } = await deps.useCases.mirror.download(owner, id);
      res.status(200);
      res.setHeader('Content-Type', 'application/zip');
      res.setHeader('Content-Length', String(archive.size));
      res.setHeader('ETag', `"${archive.sha256}"`);
      res.setHeader('Cache-Control', 'no-store');
      await pipeline(body, res);
    });
    // A pull URL: the archive is pulled from its origin registry unless the mirror holds it, then
    // served from the mirror by the archive's own signed URL.
    router.get('/registry-mirror-pull/:owner/:sha256/:filename', async (req, res) => {
      const owner = String(req.params.owner);
      const sha256 = String(req.params.sha256);
      const claims = deps.signer.verify('GET', mirrorPullObject(owner, sha256), req.query);
      const text = (name: string) => (typeof claims[name] === 'string' ? (claims[name] as string) : '');
      const archive = await deps.useCases.mirror.pull({
        owner_id: owner,
        sha256,
        hostname: text('hostname'),
        namespace: text('namespace'),
        type: text('type'),
        version: text('version'),
        ...parsePlatform(text('platform')),
      });
      res.setHeader('Cache-Control', 'no-store');
      res.redirect(302, archiveUrl(deps, req, archive));
    });
    return router;
  },
};
