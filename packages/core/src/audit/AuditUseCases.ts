import type { UserActor } from '../domain/actors.js';
import { type AuditEntry, type AuditFilter, AUDIT_ACTIONS, isAuditAction } from '../domain/audit.js';
import { ValidationError } from '../domain/errors.js';
import { type PageQuery, type PageResult, pageRequest, pageResult } from '../domain/pagination.js';
import { requireUuid } from '../domain/validation.js';
import { ownerScope, systemScope } from '../ports/UnitOfWork.js';
import { Access } from '../usecases/Access.js';
import type { CoreDeps } from '../usecases/CoreDeps.js';

export interface AuditQuery extends PageQuery {
  action?: unknown;
  actor?: unknown;
  target_id?: unknown;
  /** An organization's log (its admins and owners); absent or `personal`: the caller's own. */
  org_id?: unknown;
}

/**
 * Reading the audit log (issue 14). A person reads their own log; an organization's log is read by
 * its admins and owners (`audit.read`). Nothing changes or deletes entries but the retention prune.
 */
export class AuditUseCases {
  private readonly access: Access;

  constructor(private readonly deps: CoreDeps) {
    this.access = new Access(deps);
  }

  /** `GET /api/audit`: newest first. */
  async list(actor: UserActor, query: AuditQuery): Promise<PageResult<AuditEntry>> {
    const request = pageRequest(query, this.deps.settings.pageLimits);
    const filter = auditFilter(query);
    const orgId = query.org_id === undefined || query.org_id === '' ? undefined : query.org_id;
    let ownerId: string;
    if (orgId === undefined) ownerId = actor.apiToken?.orgId ?? actor.userId;
    else if (orgId === 'personal') ownerId = actor.userId;
    else ownerId = requireUuid(orgId, 'org_id');
    const scope =
      ownerId === actor.userId && !actor.apiToken?.orgId
        ? ownerScope(actor.userId)
        : await this.access.authorize(actor, ownerId, 'audit.read', 'org_not_found');
    return this.deps.uow.read(scope, async (stores) =>
      pageResult(await stores.audit.page(ownerId, filter, request), request, (entry) => entry),
    );
  }

  /** Retention: deletes entries older than `auditRetentionDays` (0 keeps them); returns how many. */
  async prune(): Promise<number> {
    const days = this.deps.settings.auditRetentionDays;
    if (days <= 0) return 0;
    const before = new Date(this.deps.clock.now().getTime() - days * 86_400_000).toISOString();
    return this.deps.uow.run(systemScope, (stores) => stores.audit.pruneOlderThan(before));
  }
}

function auditFilter(query: AuditQuery): AuditFilter {
  const filter: AuditFilter = {};
  if (query.action !== undefined && query.action !== '') {
    if (!isAuditAction(query.action)) {
      throw new ValidationError(`action must be one of ${AUDIT_ACTIONS.join(', ')}`, [
        { path: 'action', message: 'unknown action' },
      ]);
    }
    filter.action = query.action;
  }
  if (query.actor !== undefined && query.actor !== '') {
    if (typeof query.actor !== 'string' || query.actor.length > 320) {
      throw new ValidationError('actor must be an id or an email', [{ path: 'actor', message: 'an id or an email' }]);
    }
    filter.actor = query.actor;
  }
  if (query.target_id !== undefined && query.target_id !== '') {
    filter.target_id = requireUuid(query.target_id, 'target_id');
  }
  return filter;
}
