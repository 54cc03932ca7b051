import { pipeline } from 'node:stream/promises';
import {
  type ConfigurationVersion,
  configurationVersionId,
  type SignedUrls,
  type TfeConfigurationVersion,
  type UseCases,
  workspaceId,
} from '@trellis/core';
import express, { type Request, type Router } from 'express';
import { attributesOf, linkage, paginate, type Resource, resource, sendDocument } from './jsonapi.js';
import { actorOf } from './tfeAuth.js';

/** The signed object an upload URL is for: one version of one owner. */
export function configurationUploadObject(ownerId: string, versionId: string): string {
  return `/_signed/configuration-versions/${ownerId}/${versionId}`;
}

/** A configuration version as go-tfe reads it; `upload-url` only while its one upload may be made. */
export function configurationVersionResource(version: ConfigurationVersion, uploadUrl: string | null): Resource {
  const errored = version.status === 'errored';
  const at = (status: string) => (version.status === status ? { [`${status}-at`]: version.updated_at } : {});
  return resource(
    'configuration-versions',
    configurationVersionId(version.id),
    {
      'auto-queue-runs': version.auto_queue_runs,
      error: errored ? version.error_code : null,
      'error-message': errored ? version.error_message : null,
      source: version.source === 'upload' ? 'tfe-api' : 'vcs',
      speculative: version.speculative,
      provisional: version.provisional,
      status: version.status,
      'status-timestamps': { 'pending-at': version.created_at, ...at('uploaded'), ...at('errored') },
      'upload-url': uploadUrl,
      'changed-files': [],
    },
    { 'ingress-attributes': null, workspace: linkage('workspaces', workspaceId(version.vine_id)) },
    {
      self: `/api/v2/configuration-versions/${configurationVersionId(version.id)}`,
      download: `/api/v2/configuration-versions/${configurationVersionId(version.id)}/download`,
    },
  );
}

export interface ConfigurationVersionRouteDeps {
  useCases: UseCases;
  signer: SignedUrls;
  publicOrigin(req: Request): string;
  signedUrlSeconds: number;
}

/**
 * Configuration versions of the Terraform Cloud API (issue 27), under `/api/v2`: the stock CLI
 * makes one on a workspace, uploads its directory to the signed `upload-url` (a `PUT` of the
 * `.tar.gz`, served by `signedConfigurationVersionRoutes`) and reads it until it is `uploaded`.
 */
export function configurationVersionRoutes(deps: ConfigurationVersionRouteDeps): Router {
  const versions = deps.useCases.tfe.configurationVersions;
  const router = express.Router();
  const doc = (req: Request, found: TfeConfigurationVersion) =>
    configurationVersionResource(
      found.version,
      found.uploadable
        ? deps.publicOrigin(req) +
            deps.signer.path(
              'PUT',
              configurationUploadObject(found.version.owner_id, found.version.id),
              deps.signedUrlSeconds,
            )
        : null,
    );

  router.post('/workspaces/:id/configuration-versions', async (req, res) => {
    const attributes = attributesOf(req.body);
    const created = await versions.create(actorOf(res), { id: String(req.params.id) }, attributes);
    sendDocument(res, 201, doc(req, created));
  });
  router.get('/workspaces/:id/configuration-versions', async (req, res) => {
    const all = await versions.list(actorOf(res), { id: String(req.params.id) });
    const page = paginate(all, req.query as Record<string, unknown>);
    sendDocument(
      res,
      200,
      page.items.map((found) => doc(req, found)),
      { meta: page.meta },
    );
  });
  router.get('/configuration-versions/:id', async (req, res) => {
    sendDocument(res, 200, doc(req, await versions.read(actorOf(res), req.params.id)));
  });
  router.get('/configuration-versions/:id/download', async (req, res) => {
    const { body, size, sha256 } = await versions.download(actorOf(res), req.params.id);
    res.status(200);
    res.setHeader('Content-Type', 'application/octet-stream');
    res.setHeader('Content-Encoding', 'identity');
    res.setHeader('Content-Length', String(size));
    res.setHeader('ETag', `"${sha256}"`);
    res.setHeader('Cache-Control', 'no-store');
    await pipeline(body, res);
  });
  return router;
}

/**
 * `PUT /_signed/configuration-versions/:owner/:version`: the one upload of a version, through the
 * signed URL its answer gave (no token: the signature is the credential). `200` once `uploaded`;
 * the problem otherwise (`422 configuration_invalid`, `413 configuration_too_large`, `409
 * configuration_version_upload_used` for a second use), the version `errored` with it.
 */
export function signedConfigurationVersionRoutes(deps: Pick<ConfigurationVersionRouteDeps, 'useCases' | 'signer'>) {
  const router = express.Router();
  router.put('/configuration-versions/:owner/:version', async (req, res) => {
    const owner = String(req.params.owner);
    const version = String(req.params.version);
    deps.signer.verify('PUT', configurationUploadObject(owner, version), req.query);
    await deps.useCases.tfe.configurationVersions.upload(owner, version, req);
    res.status(200).end();
  });
  return router;
}
