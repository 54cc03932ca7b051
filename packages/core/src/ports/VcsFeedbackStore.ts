import type { VcsCommentRef } from '../domain/vcsFeedback.js';
import type { GitProvider } from '../domain/enums.js';

/**
 * The id of each vine's comment per pull request (issue 13), so every new plan edits the same
 * comment. Rows belong to the job's owner. The feedback itself is `vcs_feedback` rows of the
 * outbox (`OutboxStore`).
 */
export interface VcsFeedbackStore {
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
