import type { UserActor } from '../domain/actors.js';
import { ConflictError } from '../domain/errors.js';
import type { StateLock } from '../domain/records.js';
import { recordAudit } from '../usecases/audit.js';
import { type CoreDeps, isoNow } from '../usecases/CoreDeps.js';
import type { TfeWorkspaceUseCases, WorkspaceRef } from './TfeWorkspaceUseCases.js';
import { isProtocolLockOf, type TfeWorkspace } from './workspaces.js';

/** Who holds a lock, as the protocol's messages (and go-tfe's error matching) say it. */
export function lockHolder(lock: StateLock): string {
  if (lock.info.Operation === 'TerraformCloudLock') return `User ${String(lock.info.Who ?? 'unknown')}`;
  return `Run ${String(lock.info.Who ?? lock.lock_id)}`;
}

/**
 * Workspace locks (issue 26) are the vine's one state lock, the same a Trellis job's engine takes
 * through the `http` backend: a local `tofu apply` through the cloud block and a Trellis DEPLOY
 * never hold it together. Locking and unlocking need `operator`; releasing someone else's lock
 * (force-unlock) needs `admin`. Every move is audited.
 */
export class TfeLockUseCases {
  constructor(
    private readonly deps: CoreDeps,
    private readonly workspaces: TfeWorkspaceUseCases,
  ) {}

  async lock(actor: UserActor, ref: WorkspaceRef, reason: unknown): Promise<TfeWorkspace> {
    const { vine, scope } = await this.workspaces.locate(actor, ref, 'state.use');
    return this.deps.uow.run(scope, async (stores) => {
      const info = {
        ID: `tfe-${this.deps.random.uuid()}`,
        Operation: 'TerraformCloudLock',
        Info: typeof reason === 'string' ? reason.slice(0, 500) : '',
        Who: actor.email,
        Version: '',
        Created: isoNow(this.deps),
        Path: '',
        TrellisUserId: actor.userId,
      };
      const outcome = await stores.states.acquireLock({
        owner_id: vine.owner_id,
        vine_id: vine.id,
        lock_id: info.ID,
        info,
        created_at: info.Created,
      });
      if (!outcome.acquired) {
        throw new ConflictError('workspace_locked', `the workspace is locked by ${lockHolder(outcome.current)}`);
      }
      await recordAudit(stores, this.deps, actor, {
        action: 'state.lock',
        target: { type: 'vine', id: vine.id },
        owner_id: vine.owner_id,
        details: { lock_id: info.ID, via: 'terraform-cloud' },
      });
      return this.workspaces.workspaceOf(stores, vine);
    });
  }

  /** Releases the caller's own protocol lock; a lock of a run or of another person is `409`. */
  async unlock(actor: UserActor, ref: WorkspaceRef): Promise<TfeWorkspace> {
    const { vine, scope } = await this.workspaces.locate(actor, ref, 'state.use');
    return this.deps.uow.run(scope, async (stores) => {
      const lock = await stores.states.getLock(vine.owner_id, vine.id);
      if (!lock) throw new ConflictError('workspace_not_locked', 'the workspace is already unlocked');
      if (!isProtocolLockOf(lock, actor.userId)) {
        throw new ConflictError('workspace_locked', `the workspace is locked by ${lockHolder(lock)}`);
      }
      await stores.states.releaseLock(vine.owner_id, vine.id, lock.lock_id);
      await recordAudit(stores, this.deps, actor, {
        action: 'state.unlock',
        target: { type: 'vine', id: vine.id },
        owner_id: vine.owner_id,
        details: { lock_id: lock.lock_id, via: 'terraform-cloud' },
      });
      return this.workspaces.workspaceOf(stores, vine);
    });
  }

  /** Releases whatever lock holds the state (`admin`), saying in the audit log whose it was. */
  async forceUnlock(actor: UserActor, ref: WorkspaceRef): Promise<TfeWorkspace> {
    const { vine, scope } = await this.workspaces.locate(actor, ref, 'state.force_unlock');
    return this.deps.uow.run(scope, async (stores) => {
      const lock = await stores.states.getLock(vine.owner_id, vine.id);
      if (!lock) throw new ConflictError('workspace_not_locked', 'the workspace is already unlocked');
      await stores.states.releaseLock(vine.owner_id, vine.id, lock.lock_id);
      await recordAudit(stores, this.deps, actor, {
        action: 'state.force_unlock',
        target: { type: 'vine', id: vine.id },
        owner_id: vine.owner_id,
        details: { lock_id: lock.lock_id, held_by: lockHolder(lock) },
      });
      return this.workspaces.workspaceOf(stores, vine);
    });
  }
}
