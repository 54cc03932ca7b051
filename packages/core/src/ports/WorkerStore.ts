import type { OwnerIds } from './UnitOfWork.js';
import type { Page, PageRequest } from '../domain/pagination.js';
import type { JsonObject, Worker } from '../domain/records.js';

/** One agent's latest heartbeat, as the control plane writes them in batches. */
export interface HeartbeatWrite {
  worker_id: string;
  version: string;
  at: string;
}

export interface WorkerStore {
  create(worker: Worker): Promise<Worker>;
  get(ownerId: string, id: string): Promise<Worker | null>;
  /** Any owner's worker: only for authenticating its `X-Worker-ID`. */
  getForAuthentication(id: string): Promise<Worker | null>;
  /** Oldest first, destroyed ones included. */
  list(ownerId: string): Promise<Worker[]>;
  /** One page, newest first (by `created_at`, then insertion), destroyed ones included. */
  page(owners: OwnerIds, request: PageRequest): Promise<Page<Worker>>;
  recordHeartbeat(ownerId: string, id: string, version: string, at: string): Promise<void>;
  /**
   * Heartbeats of any owners' workers in one write (system work). A worker whose stored heartbeat
   * is already later keeps it: another replica may have written a newer one meanwhile.
   */
  recordHeartbeats(beats: readonly HeartbeatWrite[]): Promise<void>;
  updateMetadata(ownerId: string, id: string, metadata: JsonObject): Promise<Worker>;
  markDestroyed(ownerId: string, id: string, at: string): Promise<void>;
}
