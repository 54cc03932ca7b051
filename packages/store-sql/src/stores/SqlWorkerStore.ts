import {
  type HeartbeatWrite,
  type JsonObject,
  NotFoundError,
  type Page,
  type PageRequest,
  type Worker,
  type WorkerMode,
  type WorkerStore,
} from '@trellis/core';
import { ownerList, type OwnerIds } from '@trellis/core';
import type { SqlSession } from '../dialects/Dialect.js';
import {
  jsonIn,
  jsonOut,
  type Row,
  textOut,
  textOutOrNull,
  timeIn,
  timeInOrNull,
  timeOut,
  timeOutOrNull,
  uuidOut,
} from '../rows.js';
import { keysetPage } from './keysetPage.js';

export class SqlWorkerStore implements WorkerStore {
  constructor(private readonly db: SqlSession) {}

  async create(worker: Worker): Promise<Worker> {
    const [row] = await this.db
      .insert('workers', {
        id: worker.id,
        owner_id: worker.owner_id,
        name: worker.name,
        mode: worker.mode,
        token_hash: worker.token_hash,
        last_heartbeat: timeInOrNull(worker.last_heartbeat),
        version: worker.version,
        metadata: jsonIn(worker.metadata),
        created_at: timeIn(worker.created_at),
        destroyed_at: timeInOrNull(worker.destroyed_at),
      })
      .returning('*');
    return toWorker(row);
  }

  async get(ownerId: string, id: string): Promise<Worker | null> {
    const row = await this.db.table('workers').where({ owner_id: ownerId, id }).first();
    return row ? toWorker(row) : null;
  }

  async getForAuthentication(id: string): Promise<Worker | null> {
    const row = await this.db.table('workers').where({ id }).first();
    return row ? toWorker(row) : null;
  }

  async list(ownerId: string): Promise<Worker[]> {
    const rows: Row[] = await this.db
      .table('workers')
      .where({ owner_id: ownerId })
      .orderBy([{ column: 'created_at' }, { column: 'seq' }]);
    return rows.map(toWorker);
  }

  async page(owners: OwnerIds, request: PageRequest): Promise<Page<Worker>> {
    return keysetPage(this.db.table('workers').whereIn('owner_id', ownerList(owners)), 'created_at', request, toWorker);
  }

  async recordHeartbeat(ownerId: string, id: string, version: string, at: string): Promise<void> {
    await this.db
      .table('workers')
      .where({ owner_id: ownerId, id })
      .update({ last_heartbeat: timeIn(at), version });
  }

  async recordHeartbeats(beats: readonly HeartbeatWrite[]): Promise<void> {
    if (beats.length > 0) await this.db.recordHeartbeats(beats);
  }

  async updateMetadata(ownerId: string, id: string, metadata: JsonObject): Promise<Worker> {
    const [row] = await this.db
      .table('workers')
      .where({ owner_id: ownerId, id })
      .update({ metadata: jsonIn(metadata) })
      .returning('*');
    if (!row) throw new NotFoundError('worker');
    return toWorker(row);
  }

  /** The first destruction time is kept. */
  async markDestroyed(ownerId: string, id: string, at: string): Promise<void> {
    await this.db
      .table('workers')
      .where({ owner_id: ownerId, id })
      .whereNull('destroyed_at')
      .update({ destroyed_at: timeIn(at) });
  }
}

function toWorker(row: Row): Worker {
  return {
    id: uuidOut(row.id),
    owner_id: uuidOut(row.owner_id),
    name: textOut(row.name),
    mode: textOut(row.mode) as WorkerMode,
    token_hash: textOut(row.token_hash),
    last_heartbeat: timeOutOrNull(row.last_heartbeat),
    version: textOutOrNull(row.version),
    metadata: jsonOut<JsonObject>(row.metadata),
    created_at: timeOut(row.created_at),
    destroyed_at: timeOutOrNull(row.destroyed_at),
  };
}
