import {
  NotFoundError,
  type PendingUpload,
  type SignedUrls,
  type TfeStateVersion,
  type TfeWorkspace,
  type UseCases,
  type UserActor,
  type WorkspaceRef,
} from '@trellis/core';
import express, { type Request, type Router } from 'express';
import type { FailureLimiter } from '../limits/FailureLimiter.js';
import { configurationVersionRoutes } from './configurationVersionRoutes.js';
import type { Logger } from '../logger.js';
import {
  attributesOf,
  dataList,
  JSON_API,
  jsonApiErrorHandler,
  paginate,
  relationshipOf,
  sendDocument,
} from './jsonapi.js';
import * as view from './serializers.js';
import { actorOf, tfeAuthenticate } from './tfeAuth.js';
import { runRoutes } from './runs/runRoutes.js';

/** The API version this server speaks (`TFP-API-Version`): at least 2.5 for the cloud block. */
export const TFP_API_VERSION = '2.6';
/** Requests per second a client is told it may make (`X-RateLimit-Limit`); go-tfe paces itself by it. */
export const TFP_RATE_LIMIT = '30';

export interface TfeRouteDeps {
  useCases: UseCases;
  signer: SignedUrls;
  /** `https://host[:port]` the client reached us at, for the absolute URLs of answers. */
  publicOrigin(req: Request): string;
  failures: FailureLimiter;
  logger: Logger;
  signedUrlSeconds: number;
}

/** The signed object of a version's download (GET) and of a pending upload (PUT). */
export function downloadObject(ownerId: string, versionId: number): string {
  return `/_signed/state-versions/${ownerId}/${versionId}`;
}
export function uploadObject(uploadId: string, json = false): string {
  return `/_signed/state-uploads/${uploadId}${json ? '/json' : ''}`;
}

/**
 * The Terraform Cloud API under `/api/v2` (issue 26): what the stock CLI's `cloud {}` block and
 * `backend "remote"`, and go-tfe, call for organizations, workspaces, locks, state versions,
 * outputs and variables. JSON:API in and out.
 */
export function tfeRoutes(deps: TfeRouteDeps): Router {
  const { useCases, signer } = deps;
  const tfe = useCases.tfe;
  const router = express.Router();
  router.use((_req, res, next) => {
    res.setHeader('TFP-API-Version', TFP_API_VERSION);
    res.setHeader('X-RateLimit-Limit', TFP_RATE_LIMIT);
    res.setHeader('TFP-AppName', 'Trellis');
    next();
  });
  // go-tfe reads the headers of this one request when it makes a client, whatever the token.
  router.get('/ping', (_req, res) => {
    res.status(204).end();
  });
  router.use(tfeAuthenticate(useCases, deps.failures));
  router.use(express.json({ type: [JSON_API, 'application/json'], limit: 96 * 1024 * 1024, strict: false }));

  const abilities = (actor: UserActor, ownerId: string) => tfe.workspaces.orgs.abilities(actor, ownerId);
  const workspaceDoc = async (actor: UserActor, ws: TfeWorkspace) =>
    view.workspace(ws, await abilities(actor, ws.vine.owner_id));
  const byId = (req: Request): WorkspaceRef => ({ id: String(req.params.id) });
  const byName = (req: Request): WorkspaceRef => ({
    organization: String(req.params.org),
    name: String(req.params.name),
  });
  const versionDoc = (req: Request, sv: TfeStateVersion, outputs: Parameters<typeof view.stateVersion>[2] = null) =>
    view.stateVersion(
      sv,
      {
        download: sv.downloadable
          ? deps.publicOrigin(req) +
            signer.path('GET', downloadObject(sv.version.owner_id, sv.version.id), deps.signedUrlSeconds)
          : null,
      },
      outputs,
    );

  router.get('/account/details', async (_req, res) => {
    sendDocument(res, 200, view.account(await tfe.login.accountDetails(actorOf(res))));
  });

  // go-tfe's integration tests make an organization of their own for each test (and delete it).
  router.post('/organizations', async (req, res) => {
    const actor = actorOf(res);
    const created = await useCases.orgs.create(actor, { name: attributesOf(req.body).name });
    sendDocument(res, 201, view.organization(created.name, created.created_at, await abilities(actor, created.id)));
  });
  router.delete('/organizations/:org', async (req, res) => {
    const actor = actorOf(res);
    const org = await tfe.workspaces.orgs.resolve(actor, req.params.org, 'org.delete');
    if (org.ownerId === actor.userId) throw new NotFoundError('org');
    await useCases.orgs.delete(actor, org.ownerId);
    res.status(204).end();
  });
  router.get('/organizations/:org', async (req, res) => {
    const actor = actorOf(res);
    const org = await tfe.workspaces.organization(actor, req.params.org);
    sendDocument(res, 200, view.organization(org.name, null, await abilities(actor, org.ownerId)));
  });
  router.get('/organizations/:org/entitlement-set', async (req, res) => {
    const org = await tfe.workspaces.organization(actorOf(res), req.params.org);
    sendDocument(res, 200, view.entitlementSet(org.name));
  });

  router.get('/organizations/:org/workspaces', async (req, res) => {
    const actor = actorOf(res);
    const query = req.query as Record<string, string | undefined>;
    const all = await tfe.workspaces.list(actor, req.params.org, {
      name: query['search[name]'] || undefined,
      tags: query['search[tags]'] || undefined,
      projectId: query['filter[project][id]'] || undefined,
    });
    const page = paginate(all, query);
    sendDocument(res, 200, await Promise.all(page.items.map((ws) => workspaceDoc(actor, ws))), { meta: page.meta });
  });
  router.post('/organizations/:org/workspaces', async (req, res) => {
    const actor = actorOf(res);
    const attributes = attributesOf(req.body);
    const project = relationshipOf(req.body, 'project');
    const ws = await tfe.workspaces.create(actor, req.params.org, {
      name: attributes.name,
      tags: tagNames(attributes, req.body),
      terraform_version: attributes['terraform-version'],
      execution_mode: attributes['execution-mode'],
      operations: attributes.operations,
      project_id: project && !Array.isArray(project) ? project.id : undefined,
      settings: attributes,
    });
    sendDocument(res, 201, await workspaceDoc(actor, ws));
  });
  /** A workspace read, with its current outputs when `include` names them (`?include=outputs`). */
  const read = (ref: (req: Request) => WorkspaceRef) => async (req: Request, res: express.Response) => {
    const actor = actorOf(res);
    const ws = await tfe.workspaces.read(actor, ref(req));
    const doc = await workspaceDoc(actor, ws);
    if (!includes(req, 'outputs')) return sendDocument(res, 200, doc);
    const outputs = ws.current ? (await tfe.states.summary(actor, ws.current)).outputs : [];
    const versionId = ws.current?.id ?? 0;
    const included = outputs.map((output) => view.workspaceOutput(versionId, output));
    const relationships = { ...doc.relationships, outputs: { data: included.map(({ type, id }) => ({ type, id })) } };
    sendDocument(res, 200, { ...doc, relationships }, { included });
  };
  router.get('/organizations/:org/workspaces/:name', read(byName));
  router.get('/workspaces/:id', read(byId));
  const update = (ref: (req: Request) => WorkspaceRef) => async (req: Request, res: express.Response) => {
    const actor = actorOf(res);
    const attributes = attributesOf(req.body);
    const ws = await tfe.workspaces.update(actor, ref(req), {
      name: attributes.name,
      terraform_version: attributes['terraform-version'],
      execution_mode: attributes['execution-mode'],
      operations: attributes.operations,
      ...(attributes['tag-names'] !== undefined ? { tags: attributes['tag-names'] } : {}),
      settings: attributes,
    });
    sendDocument(res, 200, await workspaceDoc(actor, ws));
  };
  router.patch('/organizations/:org/workspaces/:name', update(byName));
  router.patch('/workspaces/:id', update(byId));
  const remove =
    (ref: (req: Request) => WorkspaceRef, safe: boolean) => async (req: Request, res: express.Response) => {
      const actor = actorOf(res);
      const resources = safe ? await tfe.states.resourceCount(actor, ref(req)) : 0;
      await tfe.workspaces.delete(actor, ref(req), { safe, resources });
      res.status(204).end();
    };
  router.delete('/organizations/:org/workspaces/:name', remove(byName, false));
  router.delete('/workspaces/:id', remove(byId, false));
  router.post('/organizations/:org/workspaces/:name/actions/safe-delete', remove(byName, true));
  router.post('/workspaces/:id/actions/safe-delete', remove(byId, true));

  router.post('/workspaces/:id/relationships/tags', async (req, res) => {
    await tfe.workspaces.addTags(actorOf(res), byId(req), tagsOfList(req.body));
    res.status(204).end();
  });
  router.delete('/workspaces/:id/relationships/tags', async (req, res) => {
    await tfe.workspaces.removeTags(actorOf(res), byId(req), tagsOfList(req.body));
    res.status(204).end();
  });
  router.get('/workspaces/:id/relationships/tags', async (req, res) => {
    const ws = await tfe.workspaces.read(actorOf(res), byId(req));
    sendDocument(
      res,
      200,
      ws.vine.tags.map((tag) => ({
        type: 'tags',
        id: `tag-${Buffer.from(tag).toString('hex')}`,
        attributes: { name: tag },
      })),
    );
  });

  router.get('/organizations/:org/projects', async (req, res) => {
    const query = req.query as Record<string, string | undefined>;
    const { org, vineyards } = await tfe.workspaces.projects(
      actorOf(res),
      req.params.org,
      query['filter[names]'] || query.q,
    );
    const page = paginate(vineyards, query);
    sendDocument(
      res,
      200,
      page.items.map((vineyard) => view.project(vineyard, org)),
      { meta: page.meta },
    );
  });
  router.post('/organizations/:org/projects', async (req, res) => {
    const { org, vineyard } = await tfe.workspaces.createProject(
      actorOf(res),
      req.params.org,
      attributesOf(req.body).name,
    );
    sendDocument(res, 201, view.project(vineyard, org));
  });

  router.post('/workspaces/:id/actions/lock', async (req, res) => {
    const actor = actorOf(res);
    const ws = await tfe.locks.lock(actor, byId(req), (req.body as { reason?: unknown } | undefined)?.reason);
    sendDocument(res, 200, await workspaceDoc(actor, ws));
  });
  router.post('/workspaces/:id/actions/unlock', async (req, res) => {
    const actor = actorOf(res);
    sendDocument(res, 200, await workspaceDoc(actor, await tfe.locks.unlock(actor, byId(req))));
  });
  router.post('/workspaces/:id/actions/force-unlock', async (req, res) => {
    const actor = actorOf(res);
    sendDocument(res, 200, await workspaceDoc(actor, await tfe.locks.forceUnlock(actor, byId(req))));
  });

  router.post('/workspaces/:id/state-versions', async (req, res) => {
    const attributes = attributesOf(req.body);
    const created = await tfe.states.create(actorOf(res), byId(req), {
      serial: attributes.serial,
      md5: attributes.md5,
      lineage: attributes.lineage,
      state: attributes.state,
      force: attributes.force,
    });
    if ('version' in created) {
      sendDocument(res, 201, versionDoc(req, created.version));
      return;
    }
    const { pending } = created;
    const claims = pendingClaims(pending);
    const origin = deps.publicOrigin(req);
    sendDocument(
      res,
      201,
      view.pendingStateVersion(pending.uploadId, pending.vineId, {
        upload: origin + signer.path('PUT', uploadObject(pending.uploadId), deps.signedUrlSeconds, claims),
        jsonUpload: origin + signer.path('PUT', uploadObject(pending.uploadId, true), deps.signedUrlSeconds, claims),
      }),
    );
  });
  router.get('/workspaces/:id/current-state-version', async (req, res) => {
    sendDocument(res, 200, versionDoc(req, await tfe.states.current(actorOf(res), byId(req))));
  });
  router.get('/workspaces/:id/current-state-version-outputs', async (req, res) => {
    const actor = actorOf(res);
    const current = await tfe.states.current(actor, byId(req));
    const summary = await tfe.states.summary(actor, current.version);
    const page = paginate(summary.outputs, req.query as Record<string, unknown>);
    sendDocument(
      res,
      200,
      page.items.map((output) => view.stateOutput(current.version.id, output)),
      { meta: page.meta },
    );
  });
  router.get('/state-versions', async (req, res) => {
    const query = req.query as Record<string, string | undefined>;
    const versions = await tfe.states.list(actorOf(res), {
      organization: query['filter[organization][name]'] ?? '',
      name: query['filter[workspace][name]'] ?? '',
    });
    const page = paginate(versions, query);
    sendDocument(
      res,
      200,
      page.items.map((sv) => versionDoc(req, sv)),
      { meta: page.meta },
    );
  });
  router.get('/state-versions/:id', async (req, res) => {
    const actor = actorOf(res);
    const sv = await tfe.states.read(actor, req.params.id);
    const wantsOutputs = String(req.query.include ?? '')
      .split(',')
      .includes('outputs');
    const outputs = wantsOutputs ? (await tfe.states.summary(actor, sv.version)).outputs : null;
    sendDocument(res, 200, versionDoc(req, sv, outputs), {
      ...(outputs ? { included: outputs.map((output) => view.stateOutput(sv.version.id, output)) } : {}),
    });
  });
  router.get('/state-versions/:id/outputs', async (req, res) => {
    const actor = actorOf(res);
    const sv = await tfe.states.read(actor, req.params.id);
    const summary = await tfe.states.summary(actor, sv.version);
    const page = paginate(summary.outputs, req.query as Record<string, unknown>);
    sendDocument(
      res,
      200,
      page.items.map((output) => view.stateOutput(sv.version.id, output)),
      { meta: page.meta },
    );
  });
  router.get('/state-version-outputs/:id', async (req, res) => {
    const { version, output } = await tfe.states.output(actorOf(res), req.params.id);
    sendDocument(res, 200, view.stateOutput(version.id, output));
  });

  router.get('/workspaces/:id/vars', async (req, res) => {
    const vars = await tfe.variables.list(actorOf(res), byId(req));
    sendDocument(res, 200, vars.map(view.variable));
  });
  router.post('/workspaces/:id/vars', async (req, res) => {
    sendDocument(res, 201, view.variable(await tfe.variables.create(actorOf(res), byId(req), attributesOf(req.body))));
  });
  router.patch('/workspaces/:id/vars/:var', async (req, res) => {
    const updated = await tfe.variables.update(actorOf(res), byId(req), req.params.var, attributesOf(req.body));
    sendDocument(res, 200, view.variable(updated));
  });
  router.delete('/workspaces/:id/vars/:var', async (req, res) => {
    await tfe.variables.delete(actorOf(res), byId(req), req.params.var);
    res.status(204).end();
  });

  // Remote runs (issue 27).
  router.use(runRoutes(useCases));
  router.use(configurationVersionRoutes(deps));

  router.use((req, _res, next) => {
    next(new NotFoundError('route', 'route_not_found', `no route for ${req.method} ${req.originalUrl}`));
  });
  router.use(jsonApiErrorHandler(deps.logger));
  return router;
}

/** `tag-names`, or the `tags` relationship of a create. */
function tagNames(attributes: Record<string, unknown>, body: unknown): unknown {
  if (attributes['tag-names'] !== undefined) return attributes['tag-names'];
  const tags = relationshipOf(body, 'tags');
  return Array.isArray(tags)
    ? tags.map((tag) => (tag as { attributes?: { name?: unknown } }).attributes?.name ?? tag.id)
    : undefined;
}

/** The names of a tags relationship body: `{data: [{type: "tags", attributes: {name}}]}`. */
function tagsOfList(body: unknown): unknown[] {
  return dataList(body).map((tag) => tag.attributes?.name ?? tag.id);
}

function pendingClaims(pending: PendingUpload) {
  return {
    u: pending.uploadId,
    ow: pending.ownerId,
    vi: pending.vineId,
    us: pending.userId,
    em: pending.email,
    se: pending.serial,
    md: pending.md5,
    li: pending.lineage,
    fo: pending.force,
  };
}

/** The pending upload a verified upload URL carries. */
export function pendingOfClaims(claims: Record<string, unknown>): PendingUpload {
  return {
    uploadId: String(claims.u),
    ownerId: String(claims.ow),
    vineId: String(claims.vi),
    userId: String(claims.us),
    email: String(claims.em),
    serial: Number(claims.se),
    md5: String(claims.md),
    lineage: typeof claims.li === 'string' ? claims.li : null,
    force: claims.fo === true,
  };
}

/** Whether the request's `include` (comma-separated) names `name`. */
function includes(req: Request, name: string): boolean {
  return typeof req.query.include === 'string' && req.query.include.split(',').includes(name);
}
