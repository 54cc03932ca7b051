import { ForbiddenError, roleAllows, statusOfError } from '@trellis/core';
import type { Request, Router } from 'express';
import { pageQuery, type WebRouteDeps } from '../routing.js';
import { type AuditFilters, auditPage } from './auditPage.js';

/** The audit log (issue 14): the person's own, or an organization's they may read. */
export function auditRoutes(router: Router, deps: WebRouteDeps): void {
  router.get(
    '/audit',
    deps.headers,
    deps.signedIn(async ({ req, user, base, now, standing }) => {
      const filters = auditFilters(req);
      const orgs = (await standing()).orgs.filter((org) => roleAllows(org.role, 'audit.read'));
      try {
        const entries = await deps.useCases.audit.list(user, { ...filters, ...pageQuery(req) });
        return auditPage({ base, entries, filters, orgs, now });
      } catch (error) {
        // A role too low for the organization's log: said on the page, with the filters to go elsewhere.
        if (!(error instanceof ForbiddenError)) throw error;
        return auditPage({
          base,
          entries: null,
          filters,
          orgs,
          now,
          error: error.message,
          status: statusOfError(error),
        });
      }
    }),
  );
}

/** The filters of `/audit`, kept in its "Older" link (empty fields are no filter). */
function auditFilters(req: Request): AuditFilters {
  const filters: AuditFilters = {};
  for (const name of ['org_id', 'action', 'actor', 'target_id'] as const) {
    const value = req.query[name];
    if (typeof value === 'string' && value !== '') filters[name] = value;
  }
  return filters;
}
