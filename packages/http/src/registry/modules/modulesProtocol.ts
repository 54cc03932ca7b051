import { pipeline } from 'node:stream/promises';
import { NotFoundError } from '@trellis/core';
import express, { type Router } from 'express';
import { actorOf } from '../../tfe/tfeAuth.js';
import { REGISTRY_BASES, type RegistryProtocol, type RegistryProtocolDeps } from '../registryProtocols.js';

/** The signed object of a version's tarball (its path ends in `.tar.gz`, which tells the CLI to unpack it). */
export function moduleTarballObject(ownerId: string, versionId: string): string {
  return `/_signed/registry/modules/${ownerId}/${versionId}.tar.gz`;
}

const TARBALL_FILE = /^([0-9a-fA-F-]{36})\.tar\.gz$/;

/**
 * The module registry protocol of the stock CLI (`modules.v1`, issue 28): the versions of
 * `<namespace>/<name>/<system>`, and a version's download, a `204` whose `X-Terraform-Get` is a
 * signed, short-lived URL of its tarball (the CLI sends no token there). Authenticated by the
 * bearer token `tofu login` stored, like the Terraform Cloud API; errors are problem+json (the
 * CLI reads only their status: `404` says "module not found").
 */
export const modulesProtocol: RegistryProtocol = {
  service: 'modules.v1',
  base: REGISTRY_BASES.modules,
  routes(deps: RegistryProtocolDeps): Router {
    const router = express.Router();
    router.get('/:namespace/:name/:system/versions', deps.authenticate, async (req, res) => {
      const { module, versions } = await deps.useCases.registryModules.versions(actorOf(res), {
        namespace: req.params.namespace,
        name: req.params.name,
        system: req.params.system,
      });
      res.setHeader('Cache-Control', 'no-store');
      res.json({
        modules: [
          {
            source: `${module.namespace}/${module.name}/${module.system}`,
            versions: versions.map((version) => ({ version: version.version })),
          },
        ],
      });
    });
    router.get('/:namespace/:name/:system/:version/download', deps.authenticate, async (req, res) => {
      const download = await deps.useCases.registryModules.download(actorOf(res), {
        namespace: req.params.namespace,
        name: req.params.name,
        system: req.params.system,
        version: req.params.version,
      });
      const path = deps.signer.path(
        'GET',
        moduleTarballObject(download.ownerId, download.versionId),
        deps.signedUrlSeconds,
      );
      res.setHeader('X-Terraform-Get', `${deps.publicOrigin(req)}${path}`);
      res.setHeader('Cache-Control', 'no-store');
      res.status(204).end();
    });
    return router;
  },
  signed(deps: RegistryProtocolDeps): Router {
    const router = express.Router();
    router.get('/registry/modules/:owner/:file', async (req, res) => {
      const match = TARBALL_FILE.exec(String(req.params.file));
      if (!match?.[1]) throw new NotFoundError('module_version');
      const owner = String(req.params.owner).toLowerCase();
      const versionId = match[1].toLowerCase();
      deps.signer.verify('GET', moduleTarballObject(String(req.params.owner), match[1]), req.query);
      const { body, size, sha256 } = await deps.useCases.registryModules.openTarball(owner, versionId);
      res.status(200);
      res.setHeader('Content-Type', 'application/gzip');
      res.setHeader('Content-Length', String(size));
      res.setHeader('ETag', `"${sha256}"`);
      res.setHeader('Cache-Control', 'no-store');
      if (req.method === 'HEAD') {
        body.destroy();
        res.end();
        return;
      }
      await pipeline(body, res);
    });
    return router;
  },
};
