import type { VcsCommentRef, VcsFeedbackAttempt, VcsFeedbackItem, VcsFeedbackOutcome } from '../domain/vcsFeedback.js';
import type { GitProvider } from '../domain/enums.js';

/**
 * The outbox of feedback at the git provider (issue 13) and the id of each vine's comment per
 * pull request. Rows belong to the job's owner.
 */
export interface VcsFeedbackStore {
  add(item: VcsFeedbackItem): Promise<VcsFeedbackItem>;
  find(ownerId: string, id: string): Promise<VcsFeedbackItem | null>;
  /** A job's items, oldest first. */
  listForJob(ownerId: string, jobId: string): Promise<VcsFeedbackItem[]>;
  /**
   * System work: up to `limit` pending items due at `now`, oldest due first, each moved to
   * `leaseUntil` so no other worker takes it while it is sent. On Postgres rows another
   * transaction holds are skipped (`FOR UPDATE SKIP LOCKED`).
   */
  claimDue(now: string, leaseUntil: string, limit: number): Promise<VcsFeedbackItem[]>;
  /** Whether an item of the same vine and subject was written after this one. */
  hasNewer(item: Pick<VcsFeedbackItem, 'owner_id' | 'id' | 'vine_id' | 'subject'>): Promise<boolean>;
  /** Appends an attempt (when given) and moves the item on; null when it is gone. */
  recordAttempt(
    ownerId: string,
    id: string,
    attempt: VcsFeedbackAttempt | null,
    outcome: VcsFeedbackOutcome,
  ): Promise<VcsFeedbackItem | null>;
  getComment(
    ownerId: string,
    vineId: string,
    provider: GitProvider,
    repository: string,
    number: number,
  ): Promise<VcsCommentRef | null>;
  /** Creates or replaces the vine's comment id for that pull request. */
  putComment(ref: VcsCommentRef): Promise<VcsCommentRef>;
}
