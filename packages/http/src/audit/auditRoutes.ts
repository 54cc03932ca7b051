import type { UseCases } from '@trellis/core';
import { AuditList, ListAuditQuery } from '@trellis/contract';
import { PAGED_LIST_DESCRIPTION, PAGED_LIST_HEADERS, pagedList } from '../routing/pagedList.js';
import { defineRoute, type RouteSpec } from '../routing/route.js';

/** The audit log (issue 14): read-only; no endpoint changes or deletes an entry. */
export function auditRoutes(useCases: UseCases): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/audit',
      operationId: 'listAudit',
      summary: "Your audit log, or an organization's (admins and owners), newest first",
      description: PAGED_LIST_DESCRIPTION,
      tags: ['audit'],
      auth: 'user',
      query: ListAuditQuery,
      responses: { 200: { description: 'A page of audit entries', schema: AuditList, headers: PAGED_LIST_HEADERS } },
      handler: async ({ req, user, query }) => pagedList(req, 'entries', await useCases.audit.list(user, query)),
    }),
  ];
}
