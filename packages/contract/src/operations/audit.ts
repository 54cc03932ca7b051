/** The audit log: each operation as data (served by `http/src/audit/auditRoutes.ts`). */
import { operation } from '../operation.js';
import { PAGED_LIST_DESCRIPTION, PAGED_LIST_HEADERS } from '../paging.js';
import { AuditList, ListAuditQuery } from '../schemas.js';

export const listAudit = operation({
  method: 'get',
  path: '/api/audit',
  operationId: 'listAudit',
  summary: "Your audit log, or an organization's (admins and owners), newest first",
  description: PAGED_LIST_DESCRIPTION,
  tags: ['audit'],
  auth: 'user',
  query: ListAuditQuery,
  responses: { 200: { description: 'A page of audit entries', schema: AuditList, headers: PAGED_LIST_HEADERS } },
});

/** In the order the API reference lists them. */
export const auditOperations = { listAudit };
