import type { UseCases } from '@trellis/core';
import { pagedList } from '../routing/pagedList.js';
import { implement, type RouteSpec } from '../routing/route.js';
import { operations } from '@trellis/contract';

/** The audit log (issue 14): read-only; no endpoint changes or deletes an entry. */
export function auditRoutes(useCases: UseCases): RouteSpec[] {
  return [
    implement(operations.listAudit, async ({ req, user, query }) =>
      pagedList(req, 'entries', await useCases.audit.list(user, query)),
    ),
  ];
}
