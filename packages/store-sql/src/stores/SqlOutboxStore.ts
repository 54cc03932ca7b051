import {
  DELIVERY_STATUSES,
  type DeliveryAttempt,
  GIT_PROVIDERS,
  isOneOf,
  type NotificationDelivery,
  OUTBOX_KINDS,
  type OutboxAttempts,
  type OutboxEntry,
  type OutboxItems,
  type OutboxKind,
  type OutboxOutcome,
  type OutboxStore,
  type Page,
  type PageRequest,
  VCS_FEEDBACK_STATUSES,
  type VcsFeedbackAttempt,
  type VcsFeedbackItem,
  type VcsFeedbackPayload,
} from '@trellis/core';
import type { SqlSession } from '../dialects/Dialect.js';
import { jsonIn, jsonOut, type Row, textOut, timeIn, timeInOrNull, timeOut, timeOutOrNull, uuidOut } from '../rows.js';
import { keysetPage } from './keysetPage.js';
import { claimDueOutboxRows } from './outbox.js';

/** The outbox (m044): one table, a `kind` per row, each kind's lookup columns beside its JSON payload. */
export class SqlOutboxStore implements OutboxStore {
  constructor(private readonly db: SqlSession) {}

  async add<K extends OutboxKind>(kind: K, item: OutboxItems[K]): Promise<OutboxItems[K]> {
    const [row] = await this.db.insert('outbox', toRow({ kind, item } as OutboxEntry)).returning('*');
    return toEntry(row).item as OutboxItems[K];
  }

  async find<K extends OutboxKind>(kind: K, id: string): Promise<OutboxItems[K] | null> {
    const row = await this.db.table('outbox').where({ kind, id }).first();
    return row ? (toEntry(row).item as OutboxItems[K]) : null;
  }

  async claimDue(
    now: string,
    leaseUntil: string,
    limit: number,
    kinds: readonly OutboxKind[] = OUTBOX_KINDS,
  ): Promise<OutboxEntry[]> {
    if (kinds.length === 0) return [];
    const narrowed = kinds.length < OUTBOX_KINDS.length ? { column: 'kind', values: kinds } : null;
    const rows = await claimDueOutboxRows(this.db, 'outbox', now, leaseUntil, limit, narrowed);
    return rows.map(toEntry);
  }

  async recordAttempt<K extends OutboxKind>(
    kind: K,
    ownerId: string,
    id: string,
    attempt: OutboxAttempts[K] | null,
    outcome: OutboxOutcome<K>,
  ): Promise<OutboxItems[K] | null> {
    const where = { kind, owner_id: ownerId, id };
    const current = await this.db.lockForUpdate(this.db.table('outbox').where(where)).first();
    if (!current) return null;
    const attempts = jsonOut<unknown[]>(current.attempts);
    if (attempt) attempts.push(attempt);
    const [row] = await this.db
      .table('outbox')
      .where(where)
      .update({
        attempts: jsonIn(attempts),
        status: outcome.status,
        next_attempt_at: timeIn(outcome.next_attempt_at),
        finished_at: timeInOrNull(outcome.finished_at),
      })
      .returning('*');
    return row ? (toEntry(row).item as OutboxItems[K]) : null;
  }

  async pageDeliveries(
    ownerId: string,
    notificationId: string,
    request: PageRequest,
  ): Promise<Page<NotificationDelivery>> {
    return keysetPage(
      this.db.table('outbox').where({ kind: 'notification', owner_id: ownerId, notification_id: notificationId }),
      'created_at',
      request,
      toDelivery,
    );
  }

  async listVcsFeedback(ownerId: string, jobId: string): Promise<VcsFeedbackItem[]> {
    const rows: Row[] = await this.db
      .table('outbox')
      .where({ kind: 'vcs_feedback', owner_id: ownerId, job_id: jobId })
      .orderBy('seq');
    return rows.map(toFeedback);
  }

  async hasNewerVcsFeedback(item: Pick<VcsFeedbackItem, 'owner_id' | 'id' | 'vine_id' | 'subject'>): Promise<boolean> {
    const own = await this.db
      .table('outbox')
      .select('seq')
      .where({ kind: 'vcs_feedback', owner_id: item.owner_id, id: item.id })
      .first();
    if (!own) return false;
    const newer = await this.db
      .table('outbox')
      .select('seq')
      .where({ owner_id: item.owner_id, vine_id: item.vine_id, subject: item.subject })
      .where('seq', '>', own.seq as number)
      .first();
    return newer !== undefined;
  }
}

function toRow(entry: OutboxEntry): Row {
  const { item } = entry;
  const common = {
    id: item.id,
    owner_id: item.owner_id,
    kind: entry.kind,
    payload: jsonIn(item.payload),
    status: item.status,
    attempts: jsonIn(item.attempts),
    created_at: timeIn(item.created_at),
    next_attempt_at: timeIn(item.next_attempt_at),
    finished_at: timeInOrNull(item.finished_at),
  };
  if (entry.kind === 'notification') {
    return { ...common, notification_id: entry.item.notification_id, event: entry.item.event };
  }
  const feedback = entry.item;
  return {
    ...common,
    job_id: feedback.job_id,
    vine_id: feedback.vine_id,
    provider: feedback.provider,
    subject: feedback.subject,
  };
}

function toEntry(row: Row): OutboxEntry {
  const kind = textOut(row.kind);
  if (!isOneOf(OUTBOX_KINDS, kind)) throw new TypeError(`outbox.kind holds an unknown kind: ${kind}`);
  return kind === 'notification' ? { kind, item: toDelivery(row) } : { kind, item: toFeedback(row) };
}

function toDelivery(row: Row): NotificationDelivery {
  const status = textOut(row.status);
  if (!isOneOf(DELIVERY_STATUSES, status)) throw new TypeError(`outbox.status of a delivery is unknown: ${status}`);
  return {
    id: uuidOut(row.id),
    owner_id: uuidOut(row.owner_id),
    notification_id: uuidOut(row.notification_id),
    event: textOut(row.event) as NotificationDelivery['event'],
    payload: jsonOut(row.payload),
    status,
    attempts: jsonOut<DeliveryAttempt[]>(row.attempts),
    created_at: timeOut(row.created_at),
    next_attempt_at: timeOut(row.next_attempt_at),
    finished_at: timeOutOrNull(row.finished_at),
  };
}

function toFeedback(row: Row): VcsFeedbackItem {
  const status = textOut(row.status);
  const provider = textOut(row.provider);
  const payload = jsonOut<VcsFeedbackPayload>(row.payload);
  if (!isOneOf(VCS_FEEDBACK_STATUSES, status)) throw new TypeError(`outbox.status of feedback is unknown: ${status}`);
  if (!isOneOf(GIT_PROVIDERS, provider)) throw new TypeError(`outbox.provider holds an unknown provider: ${provider}`);
  return {
    id: uuidOut(row.id),
    owner_id: uuidOut(row.owner_id),
    job_id: uuidOut(row.job_id),
    vine_id: uuidOut(row.vine_id),
    provider,
    kind: payload.kind,
    subject: textOut(row.subject),
    payload,
    status,
    attempts: jsonOut<VcsFeedbackAttempt[]>(row.attempts),
    created_at: timeOut(row.created_at),
    next_attempt_at: timeOut(row.next_attempt_at),
    finished_at: timeOutOrNull(row.finished_at),
  };
}
