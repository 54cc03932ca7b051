import type { Readable } from 'node:stream';
import type { UserActor } from '../domain/actors.js';
import { ConflictError, NotFoundError } from '../domain/errors.js';
import type { StateLock, StateVersion, Vine } from '../domain/records.js';
import { isUuid } from '../domain/validation.js';
import type { Scope } from '../ports/UnitOfWork.js';
import { Access } from '../usecases/Access.js';
import { recordAudit } from '../usecases/audit.js';
import { type CoreDeps, isoNow } from '../usecases/CoreDeps.js';
import { writeStateVersion } from '../usecases/stateVersionWriter.js';
import { readAll, withSerial } from './stateOutputs.js';
import type { TfeStateUseCases } from './TfeStateUseCases.js';

/** A vine's state history for people: its versions, newest first, and who holds its lock. */
export interface StateHistory {
  vine_id: string;
  versions: StateVersion[];
  lock: StateLock | null;
  /** Set while a version written after its job was lost awaits a person's review (issue 30). */
  state_after_lost: StateAfterLost | null;
}

/** The newest unreviewed version written by the engine of a job failed as lost (issue 30). */
export interface StateAfterLost {
  version_id: number;
  job_id: string | null;
  /** A later job had the vine: the version was kept for recovery, not made current. */
  rejected: boolean;
  created_at: string;
}

/** The vine's `state_after_lost`, from its versions (newest first). */
export function stateAfterLostOf(versions: readonly StateVersion[]): StateAfterLost | null {
  const late = versions.find((version) => version.after_lost && version.reviewed_at === null);
  return late
    ? { version_id: late.id, job_id: late.job_id, rejected: late.rejected, created_at: late.created_at }
    : null;
}

/**
 * The history of a vine's one state (issue 26), whoever wrote each version: listed (`viewer`),
 * downloaded (`operator`) and rolled back (`admin`, issue 29). A rollback writes the old version's
 * state as the newest, with the next serial, so the engines carry on from it; it is refused while
 * the state is locked, and audited.
 */
export class StateHistoryUseCases {
  private readonly access: Access;

  constructor(
    private readonly deps: CoreDeps,
    private readonly states: TfeStateUseCases,
  ) {
    this.access = new Access(deps);
  }

  async list(actor: UserActor, vine: unknown): Promise<StateHistory> {
    const { record, scope } = await this.locate(actor, vine, 'read');
    return this.deps.uow.read(scope, async (stores) => {
      const versions = await stores.states.listVersions(record.owner_id, record.id);
      return {
        vine_id: record.id,
        versions,
        lock: await stores.states.getLock(record.owner_id, record.id),
        state_after_lost: stateAfterLostOf(versions),
      };
    });
  }

  /**
   * Acknowledges the vine's `state_after_lost` (`admin`, issue 30): a person reviewed what the
   * late engine wrote (and recovered what a rejected version held). Audited as
   * `state.after_lost_acknowledge`; `409 state_after_lost_not_set` when nothing awaits review.
   */
  async acknowledgeAfterLost(actor: UserActor, vine: unknown): Promise<{ vine_id: string; acknowledged: number }> {
    const { record, scope } = await this.locate(actor, vine, 'state.force_unlock');
    return this.deps.uow.run(scope, async (stores) => {
      const flag = stateAfterLostOf(await stores.states.listVersions(record.owner_id, record.id));
      if (!flag) {
        throw new ConflictError(
          'state_after_lost_not_set',
          `the state of ${record.name} has no version awaiting review`,
        );
      }
      const at = isoNow(this.deps);
      const acknowledged = await stores.states.reviewAfterLost(record.owner_id, record.id, actor.userId, at);
      await recordAudit(stores, this.deps, actor, {
        action: 'state.after_lost_acknowledge',
        target: { type: 'vine', id: record.id },
        owner_id: record.owner_id,
        details: { version_id: flag.version_id, job_id: flag.job_id, rejected: flag.rejected, acknowledged },
      });
      return { vine_id: record.id, acknowledged };
    });
  }

  async download(
    actor: UserActor,
    vine: unknown,
    versionId: unknown,
  ): Promise<{ body: Readable; version: StateVersion }> {
    const { record } = await this.locate(actor, vine, 'state.use');
    const id = Number(versionId);
    if (!Number.isInteger(id) || id < 1) throw new NotFoundError('state_version');
    const opened = await this.states.open(record.owner_id, id).catch((error) => {
      throw error instanceof NotFoundError ? new NotFoundError('state_version') : error;
    });
    if (opened.version.vine_id !== record.id) throw new NotFoundError('state_version');
    return { body: opened.body, version: opened.version };
  }

  async rollback(actor: UserActor, vine: unknown, versionId: unknown): Promise<StateVersion> {
    const { record, scope } = await this.locate(actor, vine, 'state.rollback');
    const old = await this.download(actor, record.id, versionId);
    const bytes = await readAll(old.body);
    const latest = await this.deps.uow.read(scope, (stores) => stores.states.latest(record.owner_id, record.id));
    const state = withSerial(bytes, (latest?.serial ?? 0) + 1);
    const version = await writeStateVersion(this.deps, {
      scope,
      ownerId: record.owner_id,
      vineId: record.id,
      createdBy: actor.userId,
      body: (async function* () {
        yield state;
      })(),
      declaredBytes: state.length,
      authorize: async (stores) => {
        const lock = await stores.states.getLock(record.owner_id, record.id);
        if (lock) throw new ConflictError('state_locked', `the state is locked by ${String(lock.info.Who ?? 'a run')}`);
        return { jobId: null };
      },
    });
    await this.deps.uow.run(scope, (stores) =>
      recordAudit(stores, this.deps, actor, {
        action: 'state.rollback',
        target: { type: 'vine', id: record.id },
        owner_id: record.owner_id,
        details: { from_version_id: old.version.id, version_id: version.id, serial: version.serial },
      }),
    );
    return version;
  }

  /**
   * Force-unlock (`admin`): releases whatever lock holds the state (a dead engine's, a person's
   * protocol lock), audited as `state.force_unlock` with whose it was. `409 state_not_locked`
   * when it is free. Returns the lock it released.
   */
  async forceUnlock(actor: UserActor, vine: unknown): Promise<{ vine_id: string; released: StateLock }> {
    const { record, scope } = await this.locate(actor, vine, 'state.force_unlock');
    return this.deps.uow.run(scope, async (stores) => {
      const lock = await stores.states.getLock(record.owner_id, record.id);
      if (!lock) throw new ConflictError('state_not_locked', `the state of ${record.name} is not locked`);
      await stores.states.releaseLock(record.owner_id, record.id, lock.lock_id);
      await recordAudit(stores, this.deps, actor, {
        action: 'state.force_unlock',
        target: { type: 'vine', id: record.id },
        owner_id: record.owner_id,
        details: { lock_id: lock.lock_id, held_by: String(lock.info.Who ?? lock.lock_id), via: 'trellis' },
      });
      return { vine_id: record.id, released: lock };
    });
  }

  private locate(
    actor: UserActor,
    vine: unknown,
    action: 'read' | 'state.use' | 'state.rollback' | 'state.force_unlock',
  ): Promise<{ record: Vine; scope: Scope }> {
    if (typeof vine !== 'string' || vine === '') throw new NotFoundError('configuration');
    return this.access.locate(actor, action, 'configuration_not_found', async (stores, ownerId) =>
      isUuid(vine)
        ? ((await stores.vines.get(ownerId, vine.toLowerCase())) ?? (await stores.vines.findByName(ownerId, vine)))
        : stores.vines.findByName(ownerId, vine),
    );
  }
}
