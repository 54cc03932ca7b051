import type { Router } from 'express';
import { policiesPage, policyPage } from './policiesPage.js';
import { orgIdOf, pageQuery, Redirect, refusedFormStatus, type WebRouteDeps } from '../routing.js';
import { vineyardNames } from '../vineyardNames.js';

/** Policies: listed, made, changed and deleted by forms. */
export function policyRoutes(router: Router, deps: WebRouteDeps): void {
  router.get(
    '/policies',
    deps.headers,
    deps.signedIn(async ({ req, user, base, now }) => {
      const orgId = orgIdOf(req.query.org_id);
      const policies = await deps.useCases.policies.list(user, { ...pageQuery(req), org_id: orgId ?? undefined });
      const vineyards = await vineyardNames(deps.useCases, user, policies.items);
      return policiesPage({ base, policies, orgId, now, vineyards });
    }),
  );

  router.post(
    '/policies',
    deps.headers,
    ...deps.sameOriginForm,
    deps.signedIn(async ({ req, user, base, now }) => {
      const form = (req.body ?? {}) as Record<string, unknown>;
      const orgId = orgIdOf(form.org_id);
      const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
      const vineyardId = text(form.vineyard_id)?.trim() || undefined;
      try {
        const created = await deps.useCases.policies.create(user, {
          name: form.name,
          enforcement: form.enforcement,
          module: text(form.module)?.replaceAll('\r\n', '\n'),
          vineyard_id: vineyardId,
          org_id: orgId ?? undefined,
        });
        return new Redirect(`/policies/${created.id}`);
      } catch (error) {
        const refused = refusedFormStatus(error);
        if (refused === null) throw error;
        const policies = await deps.useCases.policies.list(user, { org_id: orgId ?? undefined });
        const kept = {
          name: text(form.name),
          enforcement: text(form.enforcement),
          module: text(form.module),
          vineyard_id: vineyardId,
        };
        return policiesPage({
          base,
          policies,
          orgId,
          now,
          vineyards: await vineyardNames(deps.useCases, user, policies.items),
          form: kept,
          error: (error as Error).message,
          status: refused,
        });
      }
    }),
  );

  router.get(
    '/policies/:id',
    deps.headers,
    deps.signedIn(async ({ req, user, base, now, standing }) => {
      const policy = await deps.useCases.policies.get(user, req.params.id);
      const roles = await standing();
      const mayManage = roles.may(policy.org_id ?? user.userId, 'policies.manage');
      return policyPage({
        base,
        policy,
        mayManage,
        now,
        vineyards: await vineyardNames(deps.useCases, user, [policy]),
      });
    }),
  );

  router.post(
    '/policies/:id',
    deps.headers,
    ...deps.sameOriginForm,
    deps.signedIn(async ({ req, user, base, now, standing }) => {
      const form = (req.body ?? {}) as Record<string, unknown>;
      const module = typeof form.module === 'string' ? form.module.replaceAll('\r\n', '\n') : undefined;
      try {
        await deps.useCases.policies.update(user, req.params.id, { enforcement: form.enforcement, module });
        return new Redirect(`/policies/${req.params.id}`);
      } catch (error) {
        const refused = refusedFormStatus(error);
        if (refused === null) throw error;
        const policy = await deps.useCases.policies.get(user, req.params.id);
        const roles = await standing();
        return policyPage({
          base,
          policy,
          mayManage: roles.may(policy.org_id ?? user.userId, 'policies.manage'),
          now,
          vineyards: await vineyardNames(deps.useCases, user, [policy]),
          error: (error as Error).message,
          ...(module !== undefined ? { module } : {}),
          status: refused,
        });
      }
    }),
  );

  router.post(
    '/policies/:id/delete',
    deps.headers,
    ...deps.sameOriginForm,
    deps.signedIn(async ({ req, user }) => {
      await deps.useCases.policies.delete(user, req.params.id);
      return new Redirect('/policies');
    }),
  );
}
