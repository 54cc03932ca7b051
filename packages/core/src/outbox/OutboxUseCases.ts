import { OUTBOX_KINDS, type OutboxKind } from '../domain/outbox.js';
import type { CoreDeps } from '../usecases/CoreDeps.js';
import { deliverDueRows, type OutboxDelivered, type OutboxDeliverers } from './delivery.js';

/**
 * The outbox's delivery (issue 24): one round takes due rows of every kind and hands each to its
 * kind's deliverer (notifications: the webhook or Slack receiver; git provider feedback: the
 * provider's API). Attempts, leases, backoff and giving up follow the outbox's settings.
 */
export class OutboxUseCases {
  constructor(
    private readonly deps: CoreDeps,
    private readonly deliverers: OutboxDeliverers,
  ) {}

  /** One round over `kinds` (every kind by default): what was claimed and what each attempt recorded. */
  deliverDue(kinds: readonly OutboxKind[] = OUTBOX_KINDS): Promise<OutboxDelivered[]> {
    return deliverDueRows(this.deps, this.deliverers, kinds);
  }
}
