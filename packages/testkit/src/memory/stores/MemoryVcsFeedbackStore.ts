import type {
  GitProvider,
  VcsCommentRef,
  VcsFeedbackAttempt,
  VcsFeedbackItem,
  VcsFeedbackOutcome,
  VcsFeedbackStore,
} from '@trellis/core';
import { copy, oldestFirst } from '../MemoryState.js';
import type { MemoryTransaction } from '../MemoryTransaction.js';

function commentKey(vineId: string, provider: GitProvider, repository: string, number: number): string {
  return `${vineId}:${provider}:${repository.toLowerCase()}#${number}`;
}

export class MemoryVcsFeedbackStore implements VcsFeedbackStore {
  constructor(private readonly tx: MemoryTransaction) {}

  async add(item: VcsFeedbackItem): Promise<VcsFeedbackItem> {
    this.tx.checkWrite('vcs_feedback', item.owner_id);
    if (this.tx.state.vcsFeedback.has(item.id)) throw new Error(`vcs_feedback ${item.id} exists`);
    this.tx.state.vcsFeedback.set(item.id, copy(item));
    return copy(item);
  }

  async find(ownerId: string, id: string): Promise<VcsFeedbackItem | null> {
    const item = this.tx.state.vcsFeedback.get(id);
    return item && item.owner_id === ownerId && this.tx.sees(ownerId) ? copy(item) : null;
  }

  async listForJob(ownerId: string, jobId: string): Promise<VcsFeedbackItem[]> {
    if (!this.tx.sees(ownerId)) return [];
    return [...this.tx.state.vcsFeedback.values()]
      .filter((item) => item.owner_id === ownerId && item.job_id === jobId)
      .map(copy);
  }

  async claimDue(now: string, leaseUntil: string, limit: number): Promise<VcsFeedbackItem[]> {
    const due = oldestFirst(
      [...this.tx.state.vcsFeedback.values()].filter(
        (item) =>
          this.tx.sees(item.owner_id) &&
          item.status === 'pending' &&
          Date.parse(item.next_attempt_at) <= Date.parse(now),
      ),
      (item) => item.next_attempt_at,
    ).slice(0, limit);
    for (const item of due) item.next_attempt_at = leaseUntil;
    // Written order: a job's pending status before its end status.
    const order = [...this.tx.state.vcsFeedback.keys()];
    return due.sort((a, b) => order.indexOf(a.id) - order.indexOf(b.id)).map(copy);
  }

  async hasNewer(item: Pick<VcsFeedbackItem, 'owner_id' | 'id' | 'vine_id' | 'subject'>): Promise<boolean> {
    let after = false;
    for (const other of this.tx.state.vcsFeedback.values()) {
      if (other.id === item.id) {
        after = true;
        continue;
      }
      if (
        after &&
        other.owner_id === item.owner_id &&
        other.vine_id === item.vine_id &&
        other.subject === item.subject &&
        this.tx.sees(other.owner_id)
      ) {
        return true;
      }
    }
    return false;
  }

  async recordAttempt(
    ownerId: string,
    id: string,
    attempt: VcsFeedbackAttempt | null,
    outcome: VcsFeedbackOutcome,
  ): Promise<VcsFeedbackItem | null> {
    const item = this.tx.state.vcsFeedback.get(id);
    if (!item || item.owner_id !== ownerId || !this.tx.sees(ownerId)) return null;
    if (attempt) item.attempts.push(copy(attempt));
    item.status = outcome.status;
    item.next_attempt_at = outcome.next_attempt_at;
    item.finished_at = outcome.finished_at;
    return copy(item);
  }

  async getComment(
    ownerId: string,
    vineId: string,
    provider: GitProvider,
    repository: string,
    number: number,
  ): Promise<VcsCommentRef | null> {
    const ref = this.tx.state.vcsComments.get(commentKey(vineId, provider, repository, number));
    return ref && ref.owner_id === ownerId && this.tx.sees(ownerId) ? copy(ref) : null;
  }

  async putComment(ref: VcsCommentRef): Promise<VcsCommentRef> {
    this.tx.checkWrite('vcs_comments', ref.owner_id);
    this.tx.state.vcsComments.set(commentKey(ref.vine_id, ref.provider, ref.repository, ref.number), copy(ref));
    return copy(ref);
  }
}
