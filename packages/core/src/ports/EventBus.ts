import type { JobStatus } from '../domain/enums.js';

/**
 * Events for real-time delivery (SSE, long-polled claims). They carry ids, not payloads, so they
 * fit a Postgres NOTIFY; listeners read what they need from the stores.
 */
export type TrellisEvent =
  | { type: 'job_queued'; owner_id: string; job_id: string }
  | { type: 'job_status_changed'; owner_id: string; job_id: string; status: JobStatus }
  | { type: 'log_appended'; owner_id: string; job_id: string; chunk_id: number }
  /** A worker's credentials changed (registered or destroyed): replicas drop what they cached. */
  | { type: 'worker_credentials_changed'; owner_id: string; worker_id: string }
  /**
   * What an API token authenticates as changed: a token revoked, or the memberships of an
   * organization's people (`owner_id`). Replicas drop the API token authentications they cached.
   */
  | { type: 'api_credentials_changed'; owner_id: string };

export type Unsubscribe = () => void;

export interface EventBus {
  /** Delivers to every subscriber of every process sharing the bus. Call after commit. */
  publish(event: TrellisEvent): Promise<void>;
  subscribe(listener: (event: TrellisEvent) => void): Unsubscribe;
  /**
   * Stops delivery and releases what the bus holds (a connection, a timer). The control plane
   * closes the bus it used on shutdown, a registered one too; publishing afterwards fails.
   */
  close(): Promise<void>;
}
