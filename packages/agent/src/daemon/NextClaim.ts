import type { ClaimAnswer as ClaimedJob } from '@trellis/client';

/**
 * The claim a job's final report may carry (issue 31, `claim_next`): the slot the job frees asks
 * for its next job in the report's own request, so a DEPLOY the control plane queued as its plan
 * ended, and offered to this agent, starts without a claim request of its own. Given to each
 * runner by the agent's claim loop; `begin` and `end` come in pairs, one pair per report sent.
 */
export interface NextClaim {
  /**
   * The features to claim with, or null when the agent takes no next job now (stopping, `--once`,
   * fenced, or reconciling an earlier claim). Counts the report as a claim on its way until `end`.
   */
  begin(): readonly string[] | null;
  /**
   * The report's answer: the job claimed for this slot (or null). `mayBeLost`: a request that
   * carried the claim failed on the way, so a job may have been claimed whose answer never came;
   * the agent tells the control plane which jobs it runs before its next claim.
   */
  end(claimed: ClaimedJob | null, mayBeLost: boolean): void;
}
