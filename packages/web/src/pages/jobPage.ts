import {
  isSpeculativeTrigger,
  isTerminalJobStatus,
  type Job,
  type JobView,
  type VcsFeedbackView,
  type Vineyard,
} from '@trellis/core';
import { badge, jobDuration, jobTypeLabel, pinnedCommit, shortId, triggerText, utc, when } from '../format.js';
import { type Html, html } from '../html.js';
import type { Page } from '../layout.js';
import { planSummaryText } from '../planSummary.js';
import { policyResultsSection } from './policyResults.js';
import { resourceChangesSection, vcsFeedbackSection } from './vcsFeedback.js';
import { readOnlyNote } from './vinePage.js';
import { type PlanReviewRights, planReviewSection } from '../policies/planReview.js';
import { planChangesSection } from '../policies/planChanges.js';
import type { ApprovalSetting, PlanChangesView, PlanlessActions, WaitingFor } from '@trellis/core';
import { destroyButton, jobButton } from './destroyButton.js';

export interface JobPageInput {
  base: string;
  /** With `actions` for a plan: what the person may do, by the deploy gate's rule (issue 23). */
  job: JobView;
  vineyard: Vineyard | null;
  /** The DEPLOY job that applied this plan, when there is one. */
  appliedBy: Job | null;
  /** Whether the person may cancel this job and queue more of its vine (`jobs.run`). */
  mayRun: boolean;
  /** The organization that owns the job and the person's role in it; null for their own job. */
  org: { name: string; role: string } | null;
  now: Date;
  /** The approval setting of the job's vine (null: none, or the vine is gone). */
  approvalSetting?: ApprovalSetting | null;
  /** Whether the person may approve, reject and override this plan (issue 15). */
  review?: PlanReviewRights;
  /** Why the job waits (issue 25); null or absent when it does not. */
  waitingFor?: WaitingFor | null;
  /** Of a queued job, its place in its owner's queue (issue 29). */
  queuePosition?: number | null;
  /** What the job told its git provider; null (or absent) for a job no push or pull request queued. */
  vcsFeedback?: VcsFeedbackView[] | null;
  /** What the deploy gate says of a change of the job's vine without a plan (its Destroy button). */
  planless?: PlanlessActions | null;
  /** A finished PLAN's change document (issue 29); null or absent: none (the list of addresses shows instead). */
  planChanges?: PlanChangesView | null;
}

/**
 * A job: what it is, how it is going, and its log, followed live by the client script over
 * `GET /api/jobs/{id}/logs/stream` (the `<pre>` is filled by chunk id, so a resumed stream
 * neither skips nor repeats a chunk).
 */
export function jobPage(input: JobPageInput): Page {
  const { base, job, vineyard, appliedBy, now } = input;
  const vine = job.config_snapshot.vine;
  const title = `${jobTypeLabel(job)} job`;
  const finished = isTerminalJobStatus(job.status);
  // What the agent reported, typed when it reported it; without it the client script reads the
  // engine's `Plan: …` line from the log.
  const summary = job.execution_metadata.plan_summary ?? null;
  const showsPlan = job.job_type !== 'DESTROY_WORKER';
  return {
    title: `${title} ${shortId(job.id)}`,
    section: 'jobs',
    body: html`<p class="breadcrumbs"><a href="${base}/vineyards">Vineyards</a> /
  ${vineyard ? html`<a href="${base}/vineyards/${vineyard.id}">${vineyard.name}</a> /` : ''}
  ${vine && job.vine_id ? html`<a href="${base}/configurations/${job.vine_id}">${vine.name}</a> /` : ''}</p>
<div class="title-row">
  <h1>${title} <span class="muted small"><code>${shortId(job.id)}</code></span></h1>
  ${badge(job.status, html` id="job-status" aria-live="polite"`)}
</div>
<p class="error" data-job-error${job.error_message ? '' : html` hidden`}>${job.error_message ?? ''}</p>
${queueNote(base, input.queuePosition ?? null, input.waitingFor ?? null)}
${waitingNote(base, input.waitingFor ?? null)}

${
  input.mayRun
    ? html`<div class="actions" id="job-actions">
  ${finished ? '' : html`<form method="post" action="${base}/jobs/${job.id}/cancel" class="inline-form button-form" data-cancel-job="${job.id}"><button type="submit" class="button danger">Cancel job…</button></form>`}
  ${job.vine_id ? vineActions(base, job, appliedBy, input.planless) : ''}
</div>
<p class="error" role="alert" data-action-error hidden></p>`
    : readOnlyNote(input.org, 'operators run and cancel its jobs')
}

<div class="columns">
<section class="card">
  <h2>Details</h2>
  <dl class="facts">
    <dt>Vine</dt><dd>${vine && job.vine_id ? html`<a href="${base}/configurations/${job.vine_id}">${vine.name}</a>` : (job.config_snapshot.target_worker?.name ?? '—')}</dd>
    ${gitFacts(base, job)}
    ${runFacts(job)}
    <dt>Created</dt><dd>${when(job.created_at, now)}</dd>
    <dt>Started</dt><dd>${when(job.claimed_at, now, 'waiting for an agent')}</dd>
    <dt>Finished</dt><dd data-finished>${job.finished_at ? utc(job.finished_at) : html`<span class="muted">—</span>`}</dd>
    <dt>Duration</dt><dd>${jobDuration(job, now) || html`<span class="muted">—</span>`}</dd>
    <dt>Agent</dt><dd>${job.claimed_by_worker_id ? html`<a href="${base}/workers#worker-${job.claimed_by_worker_id}"><code>${shortId(job.claimed_by_worker_id)}</code></a>` : html`<span class="muted">—</span>`}</dd>
    ${job.plan_job_id ? html`<dt>Plan</dt><dd><a href="${base}/jobs/${job.plan_job_id}"><code>${shortId(job.plan_job_id)}</code></a></dd>` : ''}
    <dt>Config hash</dt><dd><code title="${job.config_hash}">${job.config_hash.slice(0, 12)}</code></dd>
  </dl>
</section>
${
  showsPlan
    ? html`<section class="card">
  <h2>Plan summary</h2>
  <p class="plan-summary" data-plan-summary${summary ? html` data-from-metadata` : ''}>${
    summary
      ? planSummaryText(summary)
      : html`<span class="muted">${finished ? 'No plan line in the log.' : 'Appears when the engine prints its plan.'}</span>`
  }</p>
</section>`
    : ''
}
</div>
<div id="job-outcome"${finished ? '' : outcomeRefresh(base, job.id, input.mayRun)}>
${input.planChanges ? planChangesSection(input.planChanges) : resourceChangesSection(job.execution_metadata)}
${policyResultsSection(job)}
${vcsFeedbackSection(input.vcsFeedback ?? null)}

${planReviewSection(input.base, job, input.approvalSetting ?? null, appliedBy !== null, input.review ?? { mayApprove: false, mayOverride: false })}
</div>

<section class="card log-panel">
  <div class="log-toolbar">
    <h2>Log</h2>
    <span class="legend"><span class="stream-stdout">stdout</span> <span class="stream-stderr">stderr</span> <span class="stream-system">system</span></span>
    <span class="stream-state" data-stream-state>connecting…</span>
  </div>
  <pre class="log" id="log" tabindex="0" data-job-id="${job.id}" data-stream="${base}/api/jobs/${job.id}/logs/stream"></pre>
  <noscript><p>The log is shown live by a script; with scripts off, read it with <code>trellis jobs logs ${job.id}</code>.</p></noscript>
</section>`,
  };
}

/**
 * A job that has not ended yet: once the page script sees it end (`job-ended`), htmx fetches the
 * page again and swaps in what the ended job offers, as core decides it: its changes, policy
 * results and review, and its actions (a deploy only when the gate allows it).
 */
function outcomeRefresh(base: string, jobId: string, mayRun: boolean): Html {
  return html` hx-get="${base}/jobs/${jobId}" hx-trigger="job-ended once" hx-select="#job-outcome" hx-swap="outerHTML"${mayRun ? html` hx-select-oob="#job-actions"` : ''}`;
}

/** Why the job was queued and, for a git-driven job, its commit and pull request (issue 13). */
function gitFacts(base: string, job: Job): Html {
  const { trigger } = job;
  const commit = pinnedCommit(job);
  const message = trigger.type === 'push' ? (trigger.commit_message.split('\n')[0] ?? '') : '';
  return html`<dt>Trigger</dt><dd data-trigger="${trigger.type}">${triggerText(base, trigger)}${
    isSpeculativeTrigger(trigger)
      ? html` <span class="muted" data-speculative>(speculative: never deployed)</span>`
      : ''
  }</dd>
    ${
      commit
        ? html`<dt>Commit</dt><dd data-commit-facts><code title="${commit}">${commit.slice(0, 7)}</code>${
            message ? html` ${message}` : ''
          }${trigger.type === 'push' && trigger.author ? html` <span class="muted">by ${trigger.author}</span>` : ''}</dd>`
        : ''
    }
    ${
      trigger.type === 'pull_request'
        ? html`<dt>Pull request</dt><dd data-pull-request><a href="${trigger.url}" rel="noopener noreferrer">#${String(trigger.number)} ${trigger.title}</a> <span class="muted"><code>${trigger.head_branch}</code> into <code>${trigger.base_branch}</code>, by ${trigger.author}</span></dd>`
        : ''
    }`;
}

function vineActions(base: string, job: JobView, appliedBy: Job | null, planless?: PlanlessActions | null): Html {
  const vineId = job.vine_id as string;
  // A speculative plan (drift check, pull request) is never offered for a deploy.
  const isPlan = job.job_type === 'PLAN' && !isSpeculativeTrigger(job.trigger);
  const destroyPlan = job.config_snapshot.destroy === true;
  // The deploy gate's answer (issue 23): a plan it refuses is not offered, and the page says why.
  // A plan that has not succeeded yet offers none: once it ends, the page's outcome is fetched again.
  const apply = job.actions?.apply;
  const refused = apply !== undefined && !apply.allowed && apply.code !== 'plan_not_ready' ? apply : null;
  return html`${
    isPlan && appliedBy
      ? html`<a class="button" href="${base}/jobs/${appliedBy.id}">Applied by ${appliedBy.job_type === 'DESTROY' ? 'destroy' : 'deploy'} ${shortId(appliedBy.id)}</a>`
      : isPlan && job.approval?.decision === 'rejected'
        ? '' // a rejected plan is never deployed (409 plan_rejected)
        : isPlan && refused
          ? html`<span class="muted" data-deploy-refused="${refused.code ?? ''}">Not deployable: ${refused.reason ?? ''}</span>`
          : isPlan && job.status === 'SUCCESS'
            ? html`<span data-deploy-plan>${jobButton(base, vineId, { job_type: destroyPlan ? 'DESTROY' : 'DEPLOY', plan_job_id: job.id }, destroyPlan ? 'Destroy with this plan…' : 'Deploy this plan', html`class="button primary" data-create-job="${destroyPlan ? 'DESTROY' : 'DEPLOY'}" data-plan-job-id="${job.id}"`)}</span>`
            : ''
  }
  ${jobButton(base, vineId, { job_type: 'PLAN' }, 'Plan again', html`class="button" data-create-job="PLAN"`)}
  ${destroyButton(base, { id: vineId, name: job.config_snapshot.vine?.name ?? 'this vine' }, planless)}`;
}

/** An uploaded configuration (a run of the stock CLI) and a plan's run options (issue 27). */
function runFacts(job: Job): Html {
  const { source, run_options: options } = job.config_snapshot;
  const flags = [
    ...(options?.target ?? []).map((address) => `-target=${address}`),
    ...(options?.replace ?? []).map((address) => `-replace=${address}`),
    ...(options?.refresh_only ? ['-refresh-only'] : []),
    ...(options?.refresh === false ? ['-refresh=false'] : []),
  ];
  return html`${
    source?.type === 'upload'
      ? html`<dt>Configuration</dt><dd data-uploaded-source>uploaded <code>cv-${source.configuration_version_id}</code>${source.path ? html` <span class="muted">in ${source.path}</span>` : ''}</dd>`
      : ''
  }${
    flags.length > 0
      ? html`<dt>Run options</dt><dd data-run-options>${flags.map((flag) => html`<code>${flag}</code> `)}</dd>`
      : ''
  }`;
}

/** A queued job's place in its owner's queue, as of the page's load. */
function queueNote(base: string, position: number | null, waiting: WaitingFor | null): Html | string {
  if (position === null) return '';
  const next = waiting === null ? ' An idle agent takes it at its next claim.' : '';
  return html`<p class="notice" data-queue-position="${position}"><strong>Queue position ${position}</strong> among its owner's queued jobs (<a href="${base}/queue">see the queue</a>).${next}</p>`;
}

/** Why the job waits (`waiting_for`), as of the page's load; the status badge updates live. */
function waitingNote(base: string, waiting: WaitingFor | null): Html | string {
  if (!waiting) return '';
  const link = waiting.job_id ? html` <a href="${base}/jobs/${waiting.job_id}">See that job.</a>` : '';
  return html`<p class="notice" role="status" data-waiting-for="${waiting.reason}"><strong>Waiting:</strong> ${waiting.message}.${link}</p>`;
}
