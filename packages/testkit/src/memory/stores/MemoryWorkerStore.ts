import {
  ConflictError,
  type HeartbeatWrite,
  type JsonObject,
  NotFoundError,
  type Page,
  type PageRequest,
  type Worker,
  type WorkerStore,
} from '@trellis/core';
import { copy, oldestFirst, pageNewestFirst } from '../MemoryState.js';
import { ownerList, type OwnerIds } from '@trellis/core';
import type { MemoryTransaction } from '../MemoryTransaction.js';

export class MemoryWorkerStore implements WorkerStore {
  constructor(private readonly tx: MemoryTransaction) {}

  async create(worker: Worker): Promise<Worker> {
    const { workers } = this.tx.state;
    this.tx.checkWrite('workers', worker.owner_id);
    if (workers.has(worker.id)) throw new ConflictError('worker_exists', 'a worker with this id exists');
    workers.set(worker.id, copy(worker));
    return copy(worker);
  }

  async get(ownerId: string, id: string): Promise<Worker | null> {
    const worker = this.owned(ownerId, id);
    return worker ? copy(worker) : null;
  }

  async getForAuthentication(id: string): Promise<Worker | null> {
    const worker = this.tx.state.workers.get(id);
    return worker && this.tx.sees(worker.owner_id) ? copy(worker) : null;
  }

  async list(ownerId: string): Promise<Worker[]> {
    if (!this.tx.sees(ownerId)) return [];
    const mine = [...this.tx.state.workers.values()].filter((worker) => worker.owner_id === ownerId);
    return oldestFirst(mine, (worker) => worker.created_at).map(copy);
  }

  async page(owners: OwnerIds, request: PageRequest): Promise<Page<Worker>> {
    const visible = ownerList(owners).filter((owner) => this.tx.sees(owner));
    return pageNewestFirst(
      this.tx.state.workers,
      (worker) => visible.includes(worker.owner_id),
      (worker) => worker.created_at,
      request,
    );
  }

  async recordHeartbeat(ownerId: string, id: string, version: string, at: string): Promise<void> {
    const worker = this.owned(ownerId, id);
    if (!worker) return;
    worker.last_heartbeat = at;
    worker.version = version;
  }

  async recordHeartbeats(beats: readonly HeartbeatWrite[]): Promise<void> {
    for (const beat of beats) {
      const worker = this.tx.state.workers.get(beat.worker_id);
      // Another owner's worker is left alone, as row-level security leaves it on Postgres.
      if (!worker || !this.tx.sees(worker.owner_id)) continue;
      if (worker.last_heartbeat !== null && Date.parse(worker.last_heartbeat) >= Date.parse(beat.at)) continue;
      worker.last_heartbeat = beat.at;
      worker.version = beat.version;
    }
  }

  async updateMetadata(ownerId: string, id: string, metadata: JsonObject): Promise<Worker> {
    const worker = this.owned(ownerId, id);
    if (!worker) throw new NotFoundError('worker');
    worker.metadata = copy(metadata);
    return copy(worker);
  }

  /** The first destruction time is kept. */
  async markDestroyed(ownerId: string, id: string, at: string): Promise<void> {
    const worker = this.owned(ownerId, id);
    if (worker && worker.destroyed_at === null) worker.destroyed_at = at;
  }

  private owned(ownerId: string, id: string): Worker | undefined {
    const worker = this.tx.state.workers.get(id);
    return worker && worker.owner_id === ownerId && this.tx.sees(ownerId) ? worker : undefined;
  }
}
