import type { Readable } from 'node:stream';
import type { UserActor } from '../domain/actors.js';
import { ConflictError, NotFoundError } from '../domain/errors.js';
import type { StateLock, StateVersion, Vine } from '../domain/records.js';
import { isUuid } from '../domain/validation.js';
import type { Scope } from '../ports/UnitOfWork.js';
import { Access } from '../usecases/Access.js';
import { recordAudit } from '../usecases/audit.js';
import type { CoreDeps } from '../usecases/CoreDeps.js';
import { writeStateVersion } from '../usecases/stateVersionWriter.js';
import { readAll, withSerial } from './stateOutputs.js';
import type { TfeStateUseCases } from './TfeStateUseCases.js';

/** A vine's state history for people: its versions, newest first, and who holds its lock. */
export interface StateHistory {
  vine_id: string;
  versions: StateVersion[];
  lock: StateLock | null;
}

/**
 * The history of a vine's one state (issue 26), whoever wrote each version: listed (`viewer`),
 * downloaded and rolled back (`operator`). A rollback writes the old version's state as the
 * newest, with the next serial, so the engines carry on from it; it is refused while the state
 * is locked, and audited.
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
    return this.deps.uow.read(scope, async (stores) => ({
      vine_id: record.id,
      versions: await stores.states.listVersions(record.owner_id, record.id),
      lock: await stores.states.getLock(record.owner_id, record.id),
    }));
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
    const { record, scope } = await this.locate(actor, vine, 'state.use');
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
    action: 'read' | 'state.use' | 'state.force_unlock',
  ): Promise<{ record: Vine; scope: Scope }> {
    if (typeof vine !== 'string' || vine === '') throw new NotFoundError('configuration');
    return this.access.locate(actor, action, 'configuration_not_found', async (stores, ownerId) =>
      isUuid(vine)
        ? ((await stores.vines.get(ownerId, vine.toLowerCase())) ?? (await stores.vines.findByName(ownerId, vine)))
        : stores.vines.findByName(ownerId, vine),
    );
  }
}
