import type { JobView } from '@trellis/client';
import { timestamp } from '../../output/format.js';

/** `approved by cy@example.test at … (reviewed the diff)`, or null when the plan is undecided. */
export function describeApproval(job: Pick<JobView, 'approval'>): string | null {
  const approval = job.approval;
  if (!approval) return null;
  const comment = approval.comment ? ` (${approval.comment})` : '';
  return `${approval.decision} by ${approval.email ?? approval.user_id} at ${timestamp(approval.at)}${comment}`;
}

/** `by ada@example.test at …: <reason>`, or null when the plan's policies are not overridden. */
export function describeOverride(job: Pick<JobView, 'policy_override'>): string | null {
  const override = job.policy_override;
  if (!override) return null;
  return `by ${override.email ?? override.user_id} at ${timestamp(override.at)}: ${override.reason}`;
}
