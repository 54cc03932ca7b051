import type { TfeRunView, UseCases, UserActor } from '@trellis/core';
import express, { type Request, type Router } from 'express';
import { attributesOf, paginate, relationshipOf, type Resource, sendDocument } from '../jsonapi.js';
import * as view from '../serializers.js';
import { actorOf } from '../tfeAuth.js';
import { applyStub, configurationVersionStub, creatorStub, planStub, run } from './runSerializers.js';

/** The linked resource's id of a relationship of the request body, if one. */
function relatedId(body: unknown, name: string): unknown {
  const data = relationshipOf(body, name);
  return data && !Array.isArray(data) ? data.id : undefined;
}

/** Whether the request's `include` (comma-separated) names `name`. */
function includes(req: Request, name: string): boolean {
  return typeof req.query.include === 'string' && req.query.include.split(',').includes(name);
}

/**
 * Remote runs (issue 27) under `/api/v2`, mounted by `tfeRoutes` behind its bearer
 * authentication: `POST /runs`, `GET /runs/:id` (with `include`), a workspace's and an
 * organization's runs, and `actions/apply|discard|cancel|force-cancel`. The phases (`plans/:id`,
 * `applies/:id`, logs, policy checks, run events) are served beside them.
 */
export function runRoutes(useCases: UseCases): Router {
  const runs = useCases.tfe.runs;
  const router = express.Router();

  const included = async (req: Request, actor: UserActor, views: TfeRunView[]): Promise<Resource[]> => {
    const out: Resource[] = [];
    const seen = new Set<string>();
    const add = (resource: Resource) => {
      const key = `${resource.type}/${resource.id}`;
      if (!seen.has(key)) {
        seen.add(key);
        out.push(resource);
      }
    };
    for (const one of views) {
      if (includes(req, 'workspace')) {
        const ws = await useCases.tfe.workspaces.read(actor, { id: `ws-${one.vine.id}` });
        add(view.workspace(ws, await useCases.tfe.workspaces.orgs.abilities(actor, one.vine.owner_id)));
      }
      if (includes(req, 'plan')) add(planStub(one));
      if (includes(req, 'apply')) add(applyStub(one));
      if (includes(req, 'configuration_version')) add(configurationVersionStub(one));
      if (includes(req, 'created_by')) add(creatorStub(one));
    }
    return out;
  };
  router.post('/runs', async (req, res) => {
    const actor = actorOf(res);
    const created = await runs.create(actor, {
      attributes: attributesOf(req.body),
      workspace_id: relatedId(req.body, 'workspace'),
      configuration_version_id: relatedId(req.body, 'configuration-version'),
    });
    sendDocument(res, 201, run(created));
  });
  router.get('/runs/:id', async (req, res) => {
    const actor = actorOf(res);
    const one = await runs.read(actor, req.params.id);
    const extra = await included(req, actor, [one]);
    sendDocument(res, 200, run(one), extra.length > 0 ? { included: extra } : {});
  });
  router.get('/workspaces/:id/runs', async (req, res) => {
    const page = paginate(await runs.listOfWorkspace(actorOf(res), req.params.id), req.query);
    const extra = await included(req, actorOf(res), page.items);
    sendDocument(res, 200, page.items.map(run), { meta: page.meta, ...(extra.length > 0 ? { included: extra } : {}) });
  });
  router.get('/organizations/:org/runs', async (req, res) => {
    const page = paginate(await runs.listOfOrganization(actorOf(res), req.params.org), req.query);
    sendDocument(res, 200, page.items.map(run), { meta: page.meta });
  });

  // Actions answer `202 Accepted` with no body, as HCP Terraform does; go-tfe reads nothing back.
  router.post('/runs/:id/actions/apply', async (req, res) => {
    await runs.apply(actorOf(res), req.params.id);
    res.status(202).end();
  });
  router.post('/runs/:id/actions/discard', async (req, res) => {
    const comment = (req.body as { comment?: unknown } | undefined)?.comment;
    await runs.discard(actorOf(res), req.params.id, comment);
    res.status(202).end();
  });
  router.post('/runs/:id/actions/cancel', async (req, res) => {
    await runs.cancel(actorOf(res), req.params.id);
    res.status(202).end();
  });
  router.post('/runs/:id/actions/force-cancel', async (req, res) => {
    await runs.cancel(actorOf(res), req.params.id);
    res.status(202).end();
  });
  return router;
}
