import type { WorkerStatus } from './enums.js';

/**
 * The status a worker has now, derived from what is stored (DESIGN §3): heartbeats, claims,
 * silences and destruction decide it; nothing stores it.
 */
export function deriveWorkerStatus(
  worker: { last_heartbeat: string | null; destroyed_at: string | null },
  hasProcessingJob: boolean,
  now: Date,
  heartbeatTimeoutSeconds: number,
): WorkerStatus {
  if (worker.destroyed_at !== null) return 'DESTROYED';
  if (worker.last_heartbeat === null) return 'OFFLINE';
  const silentMs = now.getTime() - Date.parse(worker.last_heartbeat);
  if (silentMs > heartbeatTimeoutSeconds * 1000) return 'OFFLINE';
  return hasProcessingJob ? 'BUSY' : 'ONLINE';
}
