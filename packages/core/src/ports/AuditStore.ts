import type { AuditEntry, AuditFilter } from '../domain/audit.js';
import type { Page, PageRequest } from '../domain/pagination.js';

/**
 * The audit log (issue 14): append-only. On Postgres the application role may only insert and
 * read the table; the retention prune runs as system work.
 */
export interface AuditStore {
  append(entry: AuditEntry): Promise<void>;
  /** The owner's entries matching `filter`, newest first. */
  page(ownerId: string, filter: AuditFilter, request: PageRequest): Promise<Page<AuditEntry>>;
  /** System work: deletes entries older than `before`; returns how many. */
  pruneOlderThan(before: string): Promise<number>;
}
