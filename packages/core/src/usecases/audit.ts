import type { UserActor, WorkerActor } from '../domain/actors.js';
import type { User } from '../domain/records.js';
import type {
  AuditAction,
  AuditActor,
  AuditDetails,
  AuditEntry,
  AuditTarget,
  RequestContext,
} from '../domain/audit.js';
import type { Stores } from '../ports/UnitOfWork.js';
import type { CoreDeps } from './CoreDeps.js';

/** Who an entry names as acting: a person or API token, an agent, or the server itself. */
export type AuditBy = UserActor | WorkerActor | 'system';

export interface AuditRecord {
  action: AuditAction;
  target: AuditTarget;
  /** Whose log it goes in: the owner of the changed record (the unit of work's owner). */
  owner_id: string;
  details?: AuditDetails;
}

/**
 * Appends one audit entry in the caller's unit of work, so it commits with the change or not at
 * all: `await recordAudit(stores, this.deps, actor, { action, target, owner_id })`.
 */
export async function recordAudit(
  stores: Stores,
  deps: Pick<CoreDeps, 'clock' | 'random'>,
  by: AuditBy,
  record: AuditRecord,
): Promise<void> {
  const request = by === 'system' ? undefined : by.request;
  const entry: AuditEntry = {
    id: deps.random.uuid(),
    at: deps.clock.now().toISOString(),
    actor: auditActor(by),
    action: record.action,
    target: record.target,
    owner_id: record.owner_id,
    request_id: request?.id ?? null,
    ip: request?.ip ?? null,
    details: record.details ?? {},
  };
  await stores.audit.append(entry);
}

export function auditActor(by: AuditBy): AuditActor {
  if (by === 'system') return { type: 'system', id: null };
  if ('workerId' in by) return { type: 'worker', id: by.workerId };
  if (by.apiToken) return { type: 'token', id: by.apiToken.id, email: by.email };
  return { type: 'user', id: by.userId, email: by.email };
}

/** A person signed in to the web interface (`method`: the provider, or `bootstrap`). */
export async function recordSignIn(
  stores: Stores,
  deps: Pick<CoreDeps, 'clock' | 'random'>,
  user: User,
  method: string,
  request: RequestContext | undefined,
): Promise<void> {
  await recordAudit(
    stores,
    deps,
    { userId: user.id, email: user.email, request },
    {
      action: 'session.sign_in',
      target: { type: 'user', id: user.id },
      owner_id: user.id,
      details: { method },
    },
  );
}
