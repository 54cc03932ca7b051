import { type ApprovalSetting, failedMandatory, isDriftCheck, type JobView, uncheckedPolicies } from '@trellis/core';
import { utc } from '../format.js';
import { type Html, html } from '../html.js';

/** What the person may do with a plan (issue 15): `plans.approve` and `plans.override`. */
export interface PlanReviewRights {
  mayApprove: boolean;
  mayOverride: boolean;
}

/**
 * A PLAN's review on its job page: whether its vine requires approval, the approval or rejection
 * and the override (who, when, why), and the forms the person's role may use while the plan can
 * still be deployed. Policy results themselves are shown by the policies section.
 */
export function planReviewSection(
  base: string,
  job: JobView,
  setting: ApprovalSetting | null,
  applied: boolean,
  rights: PlanReviewRights,
): Html {
  if (job.job_type !== 'PLAN' || isDriftCheck(job) || job.vine_id === null) return html``;
  const failed = failedMandatory(job);
  const unchecked = uncheckedPolicies(job);
  const open = job.status === 'SUCCESS' && !applied;
  // The deploy gate's answer where the page has it (issue 23); the role's otherwise.
  const actions = job.actions ?? null;
  const decide = actions
    ? actions.approve.allowed || actions.reject.allowed
    : open && job.approval === null && rights.mayApprove;
  const approveRefused = actions?.reject.allowed && !actions.approve.allowed ? actions.approve : null;
  const override = actions
    ? actions.override.allowed
    : open && failed.length > 0 && job.policy_override === null && rights.mayOverride;
  return html`<section class="card" data-plan-review>
  <h2>Review</h2>
  <dl class="facts">
    <dt>Approval</dt><dd data-approval-state="${job.approval?.decision ?? (setting?.required ? 'required' : 'none')}">${approvalText(job, setting)}</dd>
    ${
      failed.length > 0 || job.policy_override
        ? html`<dt>Policy override</dt><dd data-override-state="${job.policy_override ? 'overridden' : 'needed'}">${
            job.policy_override
              ? html`overridden by ${job.policy_override.email ?? job.policy_override.user_id} at ${utc(job.policy_override.at)}: ${job.policy_override.reason}`
              : html`needed: the plan failed ${failed.map((policy, index) => html`${index > 0 ? ', ' : ''}<code>${policy.name}</code>`)}`
          }</dd>`
        : ''
    }
    ${
      unchecked.length > 0
        ? html`<dt>Policies</dt><dd data-policy-unchecked>unchecked: the agent reported no valid result of ${unchecked.map((policy, index) => html`${index > 0 ? ', ' : ''}<code>${policy.name}</code>`)}; plan again</dd>`
        : ''
    }
  </dl>
  ${
    decide
      ? html`${
          approveRefused
            ? html`<p class="muted" data-approve-refused="${approveRefused.code ?? ''}">${approveRefused.reason ?? ''}</p>`
            : html`<form class="review-form" method="post" action="${base}/jobs/${job.id}/approve" data-plan-review-form="approve">
    <label>Comment <input type="text" name="comment" maxlength="2000" placeholder="optional"></label>
    <button type="submit" class="button primary" data-approve-plan>Approve</button>
  </form>`
        }
  <form class="review-form" method="post" action="${base}/jobs/${job.id}/reject" data-plan-review-form="reject">
    <label>Why <input type="text" name="comment" maxlength="2000" required></label>
    <button type="submit" class="button danger" data-reject-plan>Reject</button>
  </form>`
      : ''
  }
  ${
    override
      ? html`<form class="review-form" method="post" action="${base}/jobs/${job.id}/override" data-plan-review-form="override">
    <label>Reason <input type="text" name="reason" maxlength="2000" required></label>
    <button type="submit" class="button danger" data-override-plan>Override policies</button>
  </form>`
      : ''
  }
</section>`;
}

function approvalText(job: JobView, setting: ApprovalSetting | null): Html {
  const approval = job.approval;
  if (approval) {
    return html`${approval.decision} by ${approval.email ?? approval.user_id} at ${utc(approval.at)}${approval.comment ? html`: ${approval.comment}` : ''}`;
  }
  if (setting?.required) {
    return html`<span class="muted">not reviewed yet; this vine deploys only approved plans${setting.separate_approver ? ', approved by someone other than the person who queued them' : ''}</span>`;
  }
  return html`<span class="muted">not reviewed (this vine does not require approval)</span>`;
}

/** The vine's approval setting, and for admins the form that changes it. */
export function approvalSettingSection(
  base: string,
  vineId: string,
  setting: ApprovalSetting | null,
  mayManage: boolean,
): Html {
  return html`<section class="card" data-approval-section>
  <h2>Approvals</h2>
  <p data-approval-setting="${setting?.required ? (setting.separate_approver ? 'separate' : 'required') : 'off'}">${
    setting?.required
      ? `Deploys need an approved plan${setting.separate_approver ? ', approved by someone other than the person who queued it' : ''}.`
      : 'Plans deploy without an approval.'
  }</p>
  ${
    mayManage
      ? html`<form method="post" action="${base}/configurations/${vineId}/approval" class="inline-form" data-approval-settings="${vineId}">
    <label><input type="checkbox" name="required"${setting?.required ? html` checked` : ''}> Require approval before deploy</label>
    <label><input type="checkbox" name="separate_approver"${setting?.separate_approver ? html` checked` : ''}> Separate approver</label>
    <button type="submit" class="button" data-approval-save>Save approvals</button>
  </form>`
      : ''
  }
</section>`;
}
