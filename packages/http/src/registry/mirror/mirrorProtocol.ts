import { pipeline } from 'node:stream/promises';
import { archiveFileName, type MirrorArchive, NotFoundError } from '@trellis/core';
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
      if (file === 'index.json') {
        const versions = await mirror.versions(actor, req.params.namespace, provider);
        sendJson(res, { versions: Object.fromEntries(versions.map((version) => [version, {}])) });
        return;
      }
      const version = file.slice(0, -'.json'.length);
      sendJson(
        res,
        await mirror.version(actor, req.params.namespace, provider, version, (archive) =>
          archiveUrl(deps, req, archive),
        ),
      );
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
    return router;
  },
};
