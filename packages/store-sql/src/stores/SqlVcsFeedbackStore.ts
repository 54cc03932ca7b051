import {
  GIT_PROVIDERS,
  type GitProvider,
  isOneOf,
  VCS_FEEDBACK_KINDS,
  VCS_FEEDBACK_STATUSES,
  type VcsCommentRef,
  type VcsFeedbackAttempt,
  type VcsFeedbackItem,
  type VcsFeedbackOutcome,
  type VcsFeedbackPayload,
  type VcsFeedbackStore,
} from '@trellis/core';
import type { SqlSession } from '../dialects/Dialect.js';
import { jsonIn, jsonOut, type Row, textOut, timeIn, timeInOrNull, timeOut, timeOutOrNull, uuidOut } from '../rows.js';
import { claimDueOutboxRows } from './outbox.js';

export class SqlVcsFeedbackStore implements VcsFeedbackStore {
  constructor(private readonly db: SqlSession) {}

  async add(item: VcsFeedbackItem): Promise<VcsFeedbackItem> {
    const [row] = await this.db
      .insert('vcs_feedback', {
        id: item.id,
        owner_id: item.owner_id,
        job_id: item.job_id,
        vine_id: item.vine_id,
        provider: item.provider,
        kind: item.kind,
        subject: item.subject,
        payload: jsonIn(item.payload),
        status: item.status,
        attempts: jsonIn(item.attempts),
        created_at: timeIn(item.created_at),
        next_attempt_at: timeIn(item.next_attempt_at),
        finished_at: timeInOrNull(item.finished_at),
      })
      .returning('*');
    return toItem(row);
  }

  async find(ownerId: string, id: string): Promise<VcsFeedbackItem | null> {
    const row = await this.db.table('vcs_feedback').where({ owner_id: ownerId, id }).first();
    return row ? toItem(row) : null;
  }

  async listForJob(ownerId: string, jobId: string): Promise<VcsFeedbackItem[]> {
    const rows: Row[] = await this.db.table('vcs_feedback').where({ owner_id: ownerId, job_id: jobId }).orderBy('seq');
    return rows.map(toItem);
  }

  async claimDue(now: string, leaseUntil: string, limit: number): Promise<VcsFeedbackItem[]> {
    const rows = await claimDueOutboxRows(this.db, 'vcs_feedback', now, leaseUntil, limit);
    return rows.sort((a, b) => Number(a.seq) - Number(b.seq)).map(toItem);
  }

  async hasNewer(item: Pick<VcsFeedbackItem, 'owner_id' | 'id' | 'vine_id' | 'subject'>): Promise<boolean> {
    const own = await this.db
      .table('vcs_feedback')
      .select('seq')
      .where({ owner_id: item.owner_id, id: item.id })
      .first();
    if (!own) return false;
    const newer = await this.db
      .table('vcs_feedback')
      .select('seq')
      .where({ owner_id: item.owner_id, vine_id: item.vine_id, subject: item.subject })
      .where('seq', '>', own.seq as number)
      .first();
    return newer !== undefined;
  }

  async recordAttempt(
    ownerId: string,
    id: string,
    attempt: VcsFeedbackAttempt | null,
    outcome: VcsFeedbackOutcome,
  ): Promise<VcsFeedbackItem | null> {
    const current = await this.db.lockForUpdate(this.db.table('vcs_feedback').where({ owner_id: ownerId, id })).first();
    if (!current) return null;
    const attempts = jsonOut<VcsFeedbackAttempt[]>(current.attempts);
    if (attempt) attempts.push(attempt);
    const [row] = await this.db
      .table('vcs_feedback')
      .where({ owner_id: ownerId, id })
      .update({
        attempts: jsonIn(attempts),
        status: outcome.status,
        next_attempt_at: timeIn(outcome.next_attempt_at),
        finished_at: timeInOrNull(outcome.finished_at),
      })
      .returning('*');
    return row ? toItem(row) : null;
  }

  async getComment(
    ownerId: string,
    vineId: string,
    provider: GitProvider,
    repository: string,
    number: number,
  ): Promise<VcsCommentRef | null> {
    const row = await this.db
      .table('vcs_comments')
      .where({ owner_id: ownerId, vine_id: vineId, provider, repository_key: repository.toLowerCase(), number })
      .first();
    return row ? toComment(row) : null;
  }

  async putComment(ref: VcsCommentRef): Promise<VcsCommentRef> {
    const row = {
      vine_id: ref.vine_id,
      owner_id: ref.owner_id,
      provider: ref.provider,
      repository_key: ref.repository.toLowerCase(),
      repository: ref.repository,
      number: ref.number,
      comment_id: ref.comment_id,
      updated_at: timeIn(ref.updated_at),
    };
    const [stored] = await this.db
      .insert('vcs_comments', row)
      .onConflict(['vine_id', 'provider', 'repository_key', 'number'])
      .merge(['repository', 'comment_id', 'updated_at'])
      .returning('*');
    return toComment(stored);
  }
}

function provider(value: unknown, table: string): GitProvider {
  const text = textOut(value);
  if (!isOneOf(GIT_PROVIDERS, text)) throw new TypeError(`${table}.provider holds an unknown provider: ${text}`);
  return text;
}

function toItem(row: Row): VcsFeedbackItem {
  const kind = textOut(row.kind);
  const status = textOut(row.status);
  if (!isOneOf(VCS_FEEDBACK_KINDS, kind)) throw new TypeError(`vcs_feedback.kind holds an unknown kind: ${kind}`);
  if (!isOneOf(VCS_FEEDBACK_STATUSES, status)) {
    throw new TypeError(`vcs_feedback.status holds an unknown status: ${status}`);
  }
  return {
    id: uuidOut(row.id),
    owner_id: uuidOut(row.owner_id),
    job_id: uuidOut(row.job_id),
    vine_id: uuidOut(row.vine_id),
    provider: provider(row.provider, 'vcs_feedback'),
    kind,
    subject: textOut(row.subject),
    payload: jsonOut<VcsFeedbackPayload>(row.payload),
    status,
    attempts: jsonOut<VcsFeedbackAttempt[]>(row.attempts),
    created_at: timeOut(row.created_at),
    next_attempt_at: timeOut(row.next_attempt_at),
    finished_at: timeOutOrNull(row.finished_at),
  };
}

function toComment(row: Row): VcsCommentRef {
  return {
    owner_id: uuidOut(row.owner_id),
    vine_id: uuidOut(row.vine_id),
    provider: provider(row.provider, 'vcs_comments'),
    repository: textOut(row.repository),
    number: Number(row.number),
    comment_id: textOut(row.comment_id),
    updated_at: timeOut(row.updated_at),
  };
}
