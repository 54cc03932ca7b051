import {
  type JsonObject,
  type NewStateVersion,
  NotFoundError,
  type StateLock,
  type StateStore,
  type StateVersion,
} from '@trellis/core';
import type { SqlSession } from '../dialects/Dialect.js';
import {
  booleanOut,
  integerOut,
  jsonIn,
  jsonOut,
  type Row,
  textOut,
  textOutOrNull,
  timeIn,
  timeOut,
  timeOutOrNull,
  uuidOut,
  uuidOutOrNull,
} from '../rows.js';

/** How often `acquireLock` retries when the lock it lost to is released before it can read it. */
const LOCK_ATTEMPTS = 3;

export class SqlStateStore implements StateStore {
  constructor(private readonly db: SqlSession) {}

  async addVersion(version: NewStateVersion): Promise<StateVersion> {
    await this.requireVine(version.owner_id, version.vine_id);
    const [row] = await this.db
      .insert('state_versions', {
        owner_id: version.owner_id,
        vine_id: version.vine_id,
        serial: version.serial,
        lineage: version.lineage,
        size: version.size,
        sha256: version.sha256,
        storage_key: version.storage_key,
        job_id: version.job_id,
        // Written only when set, so the store still seeds schemas from before m033.
        ...(version.created_by == null ? {} : { created_by: version.created_by }),
        ...(version.upload_id == null ? {} : { upload_id: version.upload_id }),
        // Likewise only when set: schemas from before m052 have no such columns.
        ...(version.after_lost ? { after_lost: true } : {}),
        ...(version.rejected ? { rejected: true } : {}),
        created_at: timeIn(version.created_at),
      })
      .returning('*');
    return toStateVersion(row);
  }

  async latest(ownerId: string, vineId: string): Promise<StateVersion | null> {
    const row = await this.db
      .table('state_versions')
      .where({ owner_id: ownerId, vine_id: vineId, rejected: false })
      .orderBy('id', 'desc')
      .first();
    return row ? toStateVersion(row) : null;
  }

  async listVersions(ownerId: string, vineId: string): Promise<StateVersion[]> {
    const rows: Row[] = await this.db
      .table('state_versions')
      .where({ owner_id: ownerId, vine_id: vineId })
      .orderBy('id', 'desc');
    return rows.map(toStateVersion);
  }

  async getVersion(ownerId: string, id: number): Promise<StateVersion | null> {
    const row = await this.db.table('state_versions').where({ owner_id: ownerId, id }).first();
    return row ? toStateVersion(row) : null;
  }

  async findUpload(ownerId: string, uploadId: string): Promise<StateVersion | null> {
    const row = await this.db.table('state_versions').where({ owner_id: ownerId, upload_id: uploadId }).first();
    return row ? toStateVersion(row) : null;
  }

  async pruneVersions(ownerId: string, vineId: string, keep: number): Promise<string[]> {
    const pruned: Row[] = await this.db
      .table('state_versions')
      .where({ owner_id: ownerId, vine_id: vineId })
      .whereNot((unreviewed) => unreviewed.where({ after_lost: true }).whereNull('reviewed_at'))
      .orderBy('id', 'desc')
      .offset(Math.max(0, keep))
      .select('id', 'storage_key');
    if (pruned.length === 0) return [];
    await this.db
      .table('state_versions')
      .where({ owner_id: ownerId, vine_id: vineId })
      .whereIn(
        'id',
        pruned.map((row) => integerOut(row.id)),
      )
      .delete();
    return pruned.map((row) => textOut(row.storage_key));
  }

  async reviewAfterLost(ownerId: string, vineId: string, by: string, at: string): Promise<number> {
    return this.db
      .table('state_versions')
      .where({ owner_id: ownerId, vine_id: vineId, after_lost: true })
      .whereNull('reviewed_at')
      .update({ reviewed_at: timeIn(at), reviewed_by: by });
  }

  async getLock(ownerId: string, vineId: string): Promise<StateLock | null> {
    const row = await this.db.table('state_locks').where({ owner_id: ownerId, vine_id: vineId }).first();
    return row ? toStateLock(row) : null;
  }

  /**
   * One INSERT that does nothing when the vine is already locked, so of two concurrent lockers
   * exactly one wins (on Postgres the loser waits for the winner's commit, then does nothing).
   */
  async acquireLock(lock: StateLock): Promise<{ acquired: true } | { acquired: false; current: StateLock }> {
    // The vine must be the owner's: the lock's key is the vine, whoever asks.
    await this.requireVine(lock.owner_id, lock.vine_id);
    for (let attempt = 1; ; attempt += 1) {
      const [taken] = await this.db
        .insert('state_locks', {
          vine_id: lock.vine_id,
          owner_id: lock.owner_id,
          lock_id: lock.lock_id,
          info: jsonIn(lock.info),
          created_at: timeIn(lock.created_at),
        })
        .onConflict(['vine_id'])
        .ignore()
        .returning('*');
      if (taken) return { acquired: true };
      const current = await this.getLock(lock.owner_id, lock.vine_id);
      if (current) return { acquired: false, current };
      // Released between our INSERT and our read: the lock is free again.
      if (attempt >= LOCK_ATTEMPTS) throw new Error(`the state lock of vine ${lock.vine_id} kept changing hands`);
    }
  }

  async releaseLock(ownerId: string, vineId: string, lockId: string): Promise<boolean> {
    const released = await this.db
      .table('state_locks')
      .where({ owner_id: ownerId, vine_id: vineId, lock_id: lockId })
      .delete();
    return released > 0;
  }

  private async requireVine(ownerId: string, vineId: string): Promise<void> {
    const vine = await this.db
      .table('vines')
      .where({ owner_id: ownerId, id: vineId })
      .whereNull('deleted_at')
      .first('id');
    if (!vine) throw new NotFoundError('configuration');
  }
}

function toStateVersion(row: Row): StateVersion {
  return {
    id: integerOut(row.id),
    owner_id: uuidOut(row.owner_id),
    vine_id: uuidOut(row.vine_id),
    serial: integerOut(row.serial),
    lineage: textOut(row.lineage),
    size: integerOut(row.size),
    sha256: textOut(row.sha256),
    storage_key: textOut(row.storage_key),
    job_id: uuidOutOrNull(row.job_id),
    created_by: uuidOutOrNull(row.created_by ?? null),
    upload_id: textOutOrNull(row.upload_id ?? null),
    after_lost: booleanOut(row.after_lost ?? false),
    rejected: booleanOut(row.rejected ?? false),
    reviewed_at: timeOutOrNull(row.reviewed_at ?? null),
    reviewed_by: uuidOutOrNull(row.reviewed_by ?? null),
    created_at: timeOut(row.created_at),
  };
}

function toStateLock(row: Row): StateLock {
  return {
    owner_id: uuidOut(row.owner_id),
    vine_id: uuidOut(row.vine_id),
    lock_id: textOut(row.lock_id),
    info: jsonOut<JsonObject>(row.info),
    created_at: timeOut(row.created_at),
  };
}
