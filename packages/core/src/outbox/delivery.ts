import {
  nextAttemptAt,
  type OutboxEntry,
  type OutboxItems,
  type OutboxKind,
  type OutboxOutcome,
} from '../domain/outbox.js';
import { systemScope } from '../ports/UnitOfWork.js';
import type { CoreDeps } from '../usecases/CoreDeps.js';

/**
 * Sends one claimed row of its kind and records the attempt (in a unit of work of the row's
 * owner); answers the row as recorded, or null when there was nothing to record (the row, or what
 * it belongs to, is gone).
 */
export interface OutboxDeliverer<K extends OutboxKind> {
  deliver(item: OutboxItems[K]): Promise<OutboxItems[K] | null>;
}

export type OutboxDeliverers = { readonly [K in OutboxKind]: OutboxDeliverer<K> };

/** One claimed row and what its deliverer recorded (null: nothing). */
export type OutboxDelivered = {
  [K in OutboxKind]: { kind: K; claimed: OutboxItems[K]; recorded: OutboxItems[K] | null };
}[OutboxKind];

type Deps = Pick<CoreDeps, 'uow' | 'clock' | 'random' | 'settings'>;

/** The end of a lease taken now: the row stays invisible to other workers until then. */
export function outboxLeaseUntil(deps: Pick<Deps, 'clock' | 'settings'>): string {
  return new Date(deps.clock.now().getTime() + deps.settings.outbox.leaseSeconds * 1000).toISOString();
}

/**
 * One round of the outbox: takes up to `TRELLIS_OUTBOX_BATCH_SIZE` due rows of `kinds` (never one
 * another replica holds) and hands each to its kind's deliverer. Each kind's rows go one after the
 * other in written order (a job's `pending` status before its end status); the kinds go side by
 * side, so a slow webhook receiver never holds up a commit status, nor a slow provider a
 * notification. Answers the rows in the order they were claimed.
 */
export async function deliverDueRows(
  deps: Deps,
  deliverers: Partial<OutboxDeliverers>,
  kinds: readonly OutboxKind[],
): Promise<OutboxDelivered[]> {
  const wanted = kinds.filter((kind) => deliverers[kind] !== undefined);
  if (wanted.length === 0) return [];
  const now = deps.clock.now().toISOString();
  const due = await deps.uow.run(systemScope, (stores) =>
    stores.outbox.claimDue(now, outboxLeaseUntil(deps), deps.settings.outbox.batchSize, wanted),
  );
  const delivered: OutboxDelivered[] = new Array(due.length);
  await Promise.all(
    wanted.map(async (kind) => {
      for (const [index, entry] of due.entries()) {
        if (entry.kind === kind) delivered[index] = await deliverOne(deliverers, entry);
      }
    }),
  );
  return delivered;
}

async function deliverOne(deliverers: Partial<OutboxDeliverers>, entry: OutboxEntry): Promise<OutboxDelivered> {
  switch (entry.kind) {
    case 'notification': {
      const deliverer = deliverers.notification;
      return {
        kind: entry.kind,
        claimed: entry.item,
        recorded: deliverer ? await deliverer.deliver(entry.item) : null,
      };
    }
    case 'vcs_feedback': {
      const deliverer = deliverers.vcs_feedback;
      return {
        kind: entry.kind,
        claimed: entry.item,
        recorded: deliverer ? await deliverer.deliver(entry.item) : null,
      };
    }
  }
}

/**
 * The outcome of a failed try that may be retried: again after the outbox's backoff, or given up
 * (`failed`) past `maxAttempts` tries (null: no cap) or past the retry window.
 */
export function retryOutcome(
  deps: Pick<Deps, 'clock' | 'random' | 'settings'>,
  createdAt: string,
  tries: number,
  maxAttempts: number | null,
): OutboxOutcome<'notification'> & OutboxOutcome<'vcs_feedback'> {
  const now = deps.clock.now();
  const at = now.toISOString();
  const next =
    maxAttempts !== null && tries >= maxAttempts
      ? null
      : nextAttemptAt(createdAt, now, tries, jitter(deps), deps.settings.outbox);
  return next === null
    ? { status: 'failed', next_attempt_at: at, finished_at: at }
    : { status: 'pending', next_attempt_at: next, finished_at: null };
}

/** A row's end `at`: delivered, failed or superseded, never tried again. */
export function finalOutcome<S extends string>(
  at: string,
  status: S,
): { status: S; next_attempt_at: string; finished_at: string } {
  return { status, next_attempt_at: at, finished_at: at };
}

/** Full jitter's random part, in [0, 1). */
function jitter(deps: Pick<Deps, 'random'>): number {
  const [a = 0, b = 0] = deps.random.bytes(2);
  return (a * 256 + b) / 65536;
}
