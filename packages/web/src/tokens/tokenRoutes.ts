import { DomainError, statusOfError } from '@trellis/core';
import type { Router } from 'express';
import { tokensPage } from './tokensPage.js';
import { orgIdOf, pageQuery, Redirect, type WebRouteDeps } from '../routing.js';

/** API tokens: a person's and an organization's, made and revoked by forms. */
export function tokenRoutes(router: Router, deps: WebRouteDeps): void {
  router.get(
    '/tokens',
    deps.headers,
    deps.signedIn(async ({ req, user, base, now }) => {
      const orgId = orgIdOf(req.query.org_id);
      const tokens = await deps.useCases.apiTokens.list(user, { ...pageQuery(req), org_id: orgId ?? undefined });
      return tokensPage({ base, tokens, orgId, now });
    }),
  );

  // Made by a form POST with our Origin (as the API's CSRF rule); the token is shown in this
  // answer only, never put in a URL or a redirect.
  router.post(
    '/tokens',
    deps.headers,
    ...deps.sameOriginForm,
    deps.signedIn(async ({ req, user, base, now }) => {
      const form = (req.body ?? {}) as Record<string, unknown>;
      const orgId = orgIdOf(form.org_id);
      const list = () => deps.useCases.apiTokens.list(user, { org_id: orgId ?? undefined });
      try {
        const created = await deps.useCases.apiTokens.create(user, {
          name: form.name,
          org_id: orgId ?? undefined,
          role: typeof form.role === 'string' && form.role !== '' ? form.role : undefined,
          expires_in_days:
            typeof form.expires_in_days === 'string' && form.expires_in_days.trim() !== ''
              ? Number(form.expires_in_days)
              : undefined,
        });
        return tokensPage({ base, tokens: await list(), orgId, now, created, status: 201 });
      } catch (error) {
        if (!(error instanceof DomainError) || !['validation', 'forbidden'].includes(error.kind)) throw error;
        const status = statusOfError(error);
        return tokensPage({ base, tokens: await list(), orgId, now, error: error.message, status });
      }
    }),
  );

  router.post(
    '/tokens/:id/revoke',
    deps.headers,
    ...deps.sameOriginForm,
    deps.signedIn(async ({ req, user }) => {
      await deps.useCases.apiTokens.revoke(user, req.params.id);
      const orgId = orgIdOf((req.body as Record<string, unknown> | undefined)?.org_id);
      return new Redirect(`/tokens${orgId ? `?org_id=${orgId}` : ''}`);
    }),
  );
}
