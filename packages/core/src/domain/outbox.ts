/**
 * The transactional outbox (issues 13, 14 and 24): one table of everything Trellis owes the outside
 * world about a change, written in the change's unit of work and sent afterwards by one delivery
 * task. Each row has a `kind`, whose payload and deliverer are its own:
 * - `notification`: a delivery of an event to a webhook or Slack receiver (`NotificationDelivery`);
 * - `vcs_feedback`: a commit status or pull request comment at a git provider (`VcsFeedbackItem`).
 * Claiming, leases, backoff and giving up are the outbox's, with its own settings (`TRELLIS_OUTBOX_*`).
 */
import type { DeliveryAttempt, NotificationDelivery } from './notifications.js';
import type { VcsFeedbackAttempt, VcsFeedbackItem } from './vcsFeedback.js';

export const OUTBOX_KINDS = ['notification', 'vcs_feedback'] as const;
export type OutboxKind = (typeof OUTBOX_KINDS)[number];

/** The row of each kind, as its deliverer and its views see it. */
export interface OutboxItems {
  notification: NotificationDelivery;
  vcs_feedback: VcsFeedbackItem;
}

/** One try at sending a row of each kind. */
export interface OutboxAttempts {
  notification: DeliveryAttempt;
  vcs_feedback: VcsFeedbackAttempt;
}

/** A row of the outbox, tagged with its kind (what a claim answers). */
export type OutboxEntry = { [K in OutboxKind]: { kind: K; item: OutboxItems[K] } }[OutboxKind];

/** How a row stands after an attempt. */
export interface OutboxOutcome<K extends OutboxKind = OutboxKind> {
  status: OutboxItems[K]['status'];
  /** While `pending`: when to try again. */
  next_attempt_at: string;
  finished_at: string | null;
}

export interface OutboxSettings {
  /** How often the delivery task takes due rows (`TRELLIS_OUTBOX_INTERVAL_S`). */
  intervalSeconds: number;
  /** Rows one round of the delivery task takes at most (`TRELLIS_OUTBOX_BATCH_SIZE`). */
  batchSize: number;
  /** A claimed row is invisible to other workers this long while it is sent (`TRELLIS_OUTBOX_LEASE_S`). */
  leaseSeconds: number;
  /** The first retry waits about this long, each next one twice as long (`TRELLIS_OUTBOX_RETRY_BASE_S`). */
  retryBaseSeconds: number;
  /** A wait between tries is never longer than this (`TRELLIS_OUTBOX_RETRY_MAX_S`). */
  retryMaxSeconds: number;
  /** Past this age a row that keeps failing is given up (`TRELLIS_OUTBOX_RETRY_WINDOW_S`). */
  retryWindowSeconds: number;
  /** Tries of a git provider feedback item, at most (`TRELLIS_OUTBOX_VCS_FEEDBACK_MAX_ATTEMPTS`). */
  vcsFeedbackMaxAttempts: number;
}

export const DEFAULT_OUTBOX_SETTINGS: OutboxSettings = {
  intervalSeconds: 5,
  batchSize: 20,
  leaseSeconds: 120,
  retryBaseSeconds: 10,
  retryMaxSeconds: 3600,
  retryWindowSeconds: 24 * 3600,
  vcsFeedbackMaxAttempts: 10,
};

/**
 * When to try again after `attempts` failed tries: exponential backoff (base × 2^(n-1), capped)
 * with full jitter in its upper half (`jitter` in [0, 1)), or null when that would fall past the
 * retry window counted from the row's creation.
 */
export function nextAttemptAt(
  createdAt: string,
  now: Date,
  attempts: number,
  jitter: number,
  settings: Pick<OutboxSettings, 'retryBaseSeconds' | 'retryMaxSeconds' | 'retryWindowSeconds'>,
): string | null {
  const exponential = settings.retryBaseSeconds * 2 ** Math.max(0, attempts - 1);
  const wait = Math.min(settings.retryMaxSeconds, exponential) * (0.5 + jitter / 2);
  const next = now.getTime() + Math.round(wait * 1000);
  if (next > Date.parse(createdAt) + settings.retryWindowSeconds * 1000) return null;
  return new Date(next).toISOString();
}
