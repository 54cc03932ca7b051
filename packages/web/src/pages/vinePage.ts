import {
  FORK_PULL_REQUEST_MODES,
  type ForkPullRequestMode,
  type GitProvider,
  DISPLAY_VALUE_CHARS,
  shortenForDisplay,
  isSpeculativeTrigger,
  type JobSummary,
  type Json,
  type PageResult,
  type PlanlessActions,
  PROVIDER_NAMES,
  type VcsConnectionView,
  type VineView,
  type Vineyard,
} from '@trellis/core';
import { badge, driftBadge, shortId, utc, when } from '../format.js';
import { externalUrl, type Html, html } from '../html.js';
import type { Page } from '../layout.js';
import { destroyButton, jobButton } from './destroyButton.js';
import { approvalSettingSection } from '../policies/planReview.js';
import { liveJobList } from '../live/jobLists.js';

/** How many of its last jobs a vine's page lists (the stream sends as many on connect). */
export const VINE_PAGE_JOBS = 10;

export interface VinePageInput {
  base: string;
  vine: VineView;
  vineyard: Vineyard | null;
  /** The newest jobs of this vine (a page; "Older" links to the rest). */
  jobs: PageResult<JobSummary>;
  /** Whether the person may queue jobs of this vine (their own, or `jobs.run` in its organization). */
  mayRun: boolean;
  /** Whether the person may change the vine's settings (drift schedule): `vineyards.manage`. */
  mayManage?: boolean;
  /** The organization that owns the vine and the person's role in it; null for their own vine. */
  org: { name: string; role: string } | null;
  /** The vine's repository connection (issue 13), null when none; absent: not shown. */
  vcs?: VcsConnectionView | null;
  /** The git providers this server can connect to (for the connect form). */
  vcsProviders?: readonly GitProvider[];
  now: Date;
  /** The stream its last jobs follow (`GET /live/jobs`); null or absent: a plain list. */
  liveJobs?: string | null;
  /** The token issuer and the `sub` of the vine's job tokens a trust policy names (issue 23: ids). */
  oidc?: { issuer: string; subjects: { deploy: string; plan: string; speculative: string } };
  /** What a DEPLOY or DESTROY without a plan meets at the deploy gate (issue 23); absent: not known. */
  planless?: PlanlessActions;
  /** The state section (issue 26): its history, lock and rollback buttons; absent: not shown. */
  state?: Html;
}

/** The newest successful plan that no deploy has used yet: what "Deploy this plan" applies. */
export function unappliedPlan(jobs: readonly JobSummary[]): JobSummary | null {
  // A speculative plan (drift check, pull request) is a plan too, but never deployed (409 plan_speculative).
  const newestPlan = jobs.find(
    (job) =>
      job.job_type === 'PLAN' &&
      job.status === 'SUCCESS' &&
      !isSpeculativeTrigger(job.trigger) &&
      // A destroy plan is applied by a DESTROY, from its own page.
      job.config_snapshot.destroy !== true,
  );
  // A rejected plan can never be deployed (409 plan_rejected): nothing to offer.
  if (!newestPlan || newestPlan.approval?.decision === 'rejected') return null;
  const applied = jobs.some(
    (job) => job.plan_job_id === newestPlan.id && job.status !== 'FAILED' && job.status !== 'CANCELLED',
  );
  return applied ? null : newestPlan;
}

/** A vine: status, what its last deployment produced, its configuration and its last jobs. */
export function vinePage(input: VinePageInput): Page {
  const { base, vine, vineyard, now } = input;
  const jobs = input.jobs.items;
  const plan = unappliedPlan(jobs);
  return {
    title: vine.name,
    section: 'vineyards',
    body: html`<p class="breadcrumbs"><a href="${base}/vineyards">Vineyards</a> /
  ${vineyard ? html`<a href="${base}/vineyards/${vineyard.id}">${vineyard.name}</a> /` : ''}</p>
<div class="title-row">
  <h1>${vine.name}</h1>
  ${badge(vine.status)}
  ${driftBadge(vine.drift)}
</div>
${vine.status_message ? html`<p class="error" data-status-message>${vine.status_message}</p>` : ''}
${
  input.mayRun
    ? html`<div class="actions" data-vine-actions>
  ${jobButton(base, vine.id, { job_type: 'PLAN' }, 'Plan', html`class="button primary" data-create-job="PLAN"`)}
  ${
    plan
      ? jobButton(
          base,
          vine.id,
          { job_type: 'DEPLOY', plan_job_id: plan.id },
          `Deploy plan ${shortId(plan.id)}`,
          html`class="button" data-create-job="DEPLOY" data-plan-job-id="${plan.id}"`,
        )
      : ''
  }
  ${
    // The deploy gate (issue 23): a vine with mandatory policies or a required approval deploys
    // only a plan: no plan-and-deploy in one go.
    (input.planless ? !input.planless.deploy.allowed : vine.approval?.required)
      ? ''
      : jobButton(
          base,
          vine.id,
          { job_type: 'DEPLOY' },
          'Plan and deploy',
          html`class="button" data-create-job="DEPLOY" data-plan-and-deploy`,
        )
  }
  ${
    vine.status === 'DEPLOYED'
      ? html`<form method="post" action="${base}/configurations/${vine.id}/drift-check" class="inline-form button-form"><button type="submit" class="button" data-drift-check="${vine.id}">Check drift</button></form>`
      : ''
  }
  ${destroyButton(base, vine, input.planless)}
</div>`
    : readOnlyNote(input.org, 'operators plan, deploy and destroy it')
}
${input.mayManage ? html`<p class="actions"><a class="button" href="${base}/configurations/${vine.id}/edit" data-edit-vine>Edit or delete</a></p>` : ''}

<div class="columns">
<section class="card" data-deployment>
  <h2>Deployment</h2>
  ${deployment(vine)}
</section>
<section class="card">
  <h2>Configuration</h2>
  ${configuration(base, vine, input.oidc)}
</section>
</div>

${input.vcs !== undefined ? repositorySection(base, input.vcs, vine, input.mayManage === true, input.vcsProviders ?? []) : ''}

<section class="card" id="drift" data-drift-section>
  <h2>Drift</h2>
  ${driftFacts(base, vine, now)}
  ${input.mayManage ? driftSettings(base, vine) : ''}
</section>

${approvalSettingSection(base, vine.id, vine.approval ?? null, input.mayManage === true)}

${input.state ?? ''}

<section class="card">
  <h2>Last jobs</h2>
  ${liveJobList(base, 'vine', jobs.slice(0, VINE_PAGE_JOBS), now, input.liveJobs ?? null)}
  ${jobs.length > VINE_PAGE_JOBS || input.jobs.next_cursor !== null ? html`<p class="pager"><a data-older href="${base}/jobs?vine_id=${vine.id}">Older jobs →</a></p>` : ''}
</section>`,
  };
}

/** What the last deploy produced: cluster and Argo CD rows only where the vine has them, and its outputs. */
function deployment(vine: VineView): Html {
  const { cluster, argocd, outputs } = vine.components;
  if (!cluster && !argocd && !outputs) {
    if (vine.status === 'DESTROYED') return html`<p class="muted">Destroyed: nothing is deployed.</p>`;
    return html`<p class="muted">Nothing deployed yet. A successful deploy records its outputs here (and its cluster and Argo CD link, when it has them).</p>`;
  }
  const argocdUrl = externalUrl(argocd?.url);
  const values = Object.entries(outputs?.values ?? {});
  const sensitive = outputs?.sensitive ?? [];
  const facts =
    cluster || argocd
      ? html`<dl class="facts">
  ${cluster?.name ? html`<dt>Cluster</dt><dd data-cluster-name>${cluster.name}</dd>` : ''}
  ${cluster?.endpoint ? html`<dt>Cluster endpoint</dt><dd><code data-cluster-endpoint>${cluster.endpoint}</code></dd>` : ''}
  ${
    argocd
      ? html`<dt>Argo CD</dt><dd>${
          argocdUrl
            ? html`<a href="${argocdUrl}" rel="noopener noreferrer" target="_blank" data-argocd-link>${argocdUrl}</a>`
            : html`<code>${argocd.url}</code>`
        }</dd>`
      : ''
  }
</dl>`
      : '';
  return html`${facts}
<h3>Outputs</h3>
${
  values.length === 0 && sensitive.length === 0
    ? html`<p class="muted">No outputs.</p>`
    : html`<div class="table-scroll" role="region" aria-label="Outputs" tabindex="0"><table class="outputs">
  <tbody>
  ${values.map(([name, value]) => html`<tr><th scope="row"><code>${name}</code></th><td><code>${shortenForDisplay(outputText(value))}</code></td></tr>`)}
  ${sensitive.map((name) => html`<tr data-sensitive-output><th scope="row"><code>${name}</code></th><td><span class="muted">(sensitive)</span></td></tr>`)}
  </tbody>
</table></div>`
}`;
}

function driftFacts(base: string, vine: VineView, now: Date): Html {
  const { drift } = vine;
  const changes = drift?.changes;
  return html`<dl class="facts">
  <dt>Last check</dt><dd>${
    drift
      ? html`${driftBadge(drift)} <a href="${base}/jobs/${drift.job_id}">${when(drift.checked_at, now)}</a>${
          changes
            ? html` <span data-drift-changes>${changes.add} to add, ${changes.change} to change, ${changes.destroy} to destroy</span>`
            : ''
        }${drift.error ? html` <span class="error" data-drift-error>${drift.error}</span>` : ''}`
      : html`<span class="muted">never checked</span>`
  }</dd>
  <dt>Schedule</dt><dd data-drift-schedule>${
    vine.drift_detection
      ? html`every ${vine.drift_detection.interval_minutes} minutes${vine.next_drift_check_at ? html`, next ${utc(vine.next_drift_check_at)}` : ''}`
      : html`<span class="muted">off</span> <code>trellis configs set ${vine.name} --drift-interval 360</code>`
  }</dd>
  <dt>Runs after</dt><dd data-triggers-after>${
    vine.triggers.after.length > 0
      ? vine.triggers.after.map(
          (id, i) => html`${i > 0 ? ', ' : ''}<a href="${base}/configurations/${id}">${shortId(id)}</a>`,
        )
      : html`<span class="muted">no other vine</span>`
  }</dd>
</dl>`;
}

/** The drift schedule's form; with htmx the section is re-rendered in place from the vine page it lands on. */
function driftSettings(base: string, vine: VineView): Html {
  const action = `${base}/configurations/${vine.id}/drift-schedule`;
  return html`<form method="post" action="${action}" class="inline-form" data-drift-settings="${vine.id}" hx-post="${action}" hx-target="closest section" hx-select="#drift" hx-swap="outerHTML">
  <label>Check every <input type="number" name="interval_minutes" min="60" max="10080" step="1" required value="${String(vine.drift_detection?.interval_minutes ?? 360)}"> minutes</label>
  <button type="submit" class="button" data-drift-save>Save schedule</button>
  ${vine.drift_detection ? html`<button type="submit" class="button" name="intent" value="off" formnovalidate data-drift-off>Turn off</button>` : ''}
  <div data-form-slot aria-live="polite"></div>
</form>`;
}

const FORK_LABELS: Record<ForkPullRequestMode, string> = {
  off: 'not planned (neutral status)',
  without_secrets: 'planned without secrets',
  with_secrets: 'planned with the secrets',
};

/** The connected repository (issue 13): what pushes and pull requests do; connect and disconnect for admins. */
function repositorySection(
  base: string,
  connection: VcsConnectionView | null,
  vine: VineView,
  mayManage: boolean,
  providers: readonly GitProvider[],
): Html {
  const facts = connection
    ? html`<dl class="facts" data-vcs-connection>
  <dt>Repository</dt><dd data-vcs-repository>${PROVIDER_NAMES[connection.provider]} <code>${connection.repository}</code></dd>
  <dt>Status</dt><dd data-vcs-status="${connection.status}">${
    connection.status === 'needs_reconnect'
      ? html`<strong class="warn">needs reconnecting</strong>: the person who connected it is no longer an admin of its owner, so their token is not used; its jobs fail until an admin connects it again`
      : 'connected'
  }</dd>
  <dt>Branch</dt><dd data-vcs-branch><code>${connection.branch}</code></dd>
  <dt>Paths</dt><dd data-vcs-paths>${
    connection.paths.length > 0
      ? connection.paths.map((pattern, i) => html`${i > 0 ? ', ' : ''}<code>${pattern}</code>`)
      : html`<span class="muted">every file</span>`
  }</dd>
  <dt>Pushes</dt><dd data-vcs-pushes>${connection.auto_deploy ? 'plan, then deploy a successful plan' : 'plan'}</dd>
  <dt>Pull requests</dt><dd data-vcs-pull-requests>${connection.pull_requests ? 'planned (never deployed)' : html`<span class="muted">ignored</span>`}</dd>
  <dt>From forks</dt><dd data-vcs-fork-pull-requests="${connection.fork_pull_requests}">${FORK_LABELS[connection.fork_pull_requests]}</dd>
  <dt>Webhook</dt><dd data-vcs-mode="${connection.webhook_mode}">${
    connection.webhook_mode === 'auto'
      ? html`created by Trellis <span class="muted small">(hook <code>${connection.hook_id ?? '—'}</code>)</span>`
      : html`manual: created at the provider, sending to <code>${connection.webhook_url}</code>`
  }</dd>
</dl>`
    : html`<p class="muted" data-vcs-none>Not connected: pushes and pull requests do not plan this vine.${
        mayManage ? '' : html` <code>trellis configs connect ${vine.name} --github OWNER/NAME --branch main</code>`
      }</p>`;
  if (!mayManage) return html`<section class="card" data-vcs-section><h2>Repository</h2>${facts}</section>`;
  const form =
    providers.length === 0
      ? html`<p class="muted">No git provider is configured on this server (<code>TRELLIS_GITHUB_CLIENT_ID</code>, ...).</p>`
      : html`<form method="post" action="${base}/configurations/${vine.id}/vcs" class="stacked-form" data-vcs-connect="${vine.id}">
  <label>Provider <select name="provider">${providers.map(
    (provider) =>
      html`<option value="${provider}"${connection?.provider === provider ? ' selected' : ''}>${PROVIDER_NAMES[provider]}</option>`,
  )}</select></label>
  <label>Repository <input name="repository" required placeholder="owner/name" value="${connection?.repository ?? ''}"></label>
  <label>Branch <input name="branch" required value="${connection?.branch ?? 'main'}"></label>
  <label>Paths <input name="paths" placeholder="infra/**, modules/**" value="${connection?.paths.join(', ') ?? ''}"> <span class="muted small">globs, comma-separated; empty: every file</span></label>
  <label><input type="checkbox" name="auto_deploy"${connection?.auto_deploy ? ' checked' : ''}> Deploy successful plans of pushes</label>
  <label><input type="checkbox" name="pull_requests"${connection === null || connection.pull_requests ? ' checked' : ''}> Plan pull requests</label>
  <label>Pull requests from forks <select name="fork_pull_requests">${FORK_PULL_REQUEST_MODES.map(
    (mode) =>
      html`<option value="${mode}"${(connection?.fork_pull_requests ?? 'off') === mode ? ' selected' : ''}>${FORK_LABELS[mode]}</option>`,
  )}</select> <span class="muted small">a fork's code runs on your agent; its plan never writes or locks the state</span></label>
  <label><input type="checkbox" name="manual"${connection?.webhook_mode === 'manual' ? ' checked' : ''}> I create the webhook myself (manual)</label>
  <div class="actions">
    <button type="submit" class="button primary" data-vcs-save>${connection ? 'Reconnect' : 'Connect'}</button>
    ${connection ? html`<button type="submit" class="button danger" formaction="${base}/configurations/${vine.id}/vcs/disconnect" formnovalidate data-vcs-disconnect>Disconnect…</button>` : ''}
  </div>
</form>`;
  return html`<section class="card" data-vcs-section><h2>Repository</h2>${facts}${form}</section>`;
}

function outputText(value: Json): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function configuration(base: string, vine: VineView, oidc?: VinePageInput['oidc']): Html {
  const source = vine.source;
  const variables = Object.entries(vine.variables);
  return html`<dl class="facts">
  <dt>Project</dt><dd>${vine.project_name}</dd>
  <dt>Source</dt><dd>${
    source.type === 'git'
      ? html`<code>${source.url}</code>${source.ref ? html` at <code>${source.ref}</code>` : ''}${source.path ? html` in <code>${source.path}</code>` : ''}`
      : html`inline: ${Object.keys(source.files)
          .sort()
          .map((file, index) => html`${index > 0 ? ', ' : ''}<code>${file}</code>`)}`
  }</dd>
  <dt>Engine</dt><dd>${vine.engine.name}${vine.engine.version ? html` ${vine.engine.version}` : ''}</dd>
  <dt>Tags</dt><dd data-vine-tags>${
    vine.tags.length === 0
      ? html`<span class="muted">none</span>`
      : vine.tags.map(
          (tag, index) =>
            html`${index > 0 ? ' ' : ''}<a class="tag" href="${base}/fleet?tag=${encodeURIComponent(tag)}" data-tag="${tag}">${tag}</a>`,
        )
  }</dd>
  <dt>Cloud identity</dt><dd>${cloudIdentityView(vine.cloud_identity)}</dd>
  ${
    oidc
      ? html`<dt>Token issuer</dt><dd><code>${oidc.issuer}</code></dd>
  <dt>DEPLOY token subject</dt><dd><code>${oidc.subjects.deploy}</code></dd>
  <dt>PLAN token subject</dt><dd><code>${oidc.subjects.plan}</code></dd>
  <dt>Speculative PLAN subject</dt><dd><code>${oidc.subjects.speculative}</code> <span class="muted small">(drift checks, pull requests)</span></dd>`
      : ''
  }
  <dt>Variables</dt><dd>${
    variables.length === 0
      ? html`<span class="muted">none</span>`
      : html`<ul class="plain">${variables.map(
          ([name, variable]) =>
            html`<li><code>${name}</code> = ${variable.sensitive ? html`<span class="muted">(sensitive)</span>` : html`<code title="${variable.value.length > DISPLAY_VALUE_CHARS ? `${variable.value.length.toLocaleString('en-US')} characters` : ''}">${shortenForDisplay(variable.value)}</code>`}</li>`,
        )}</ul>`
  }</dd>
  <dt>ID</dt><dd><code>${vine.id}</code></dd>
</dl>`;
}

/** Why a page shows no buttons: the person's role in the organization that owns the record. */
export function readOnlyNote(org: { name: string; role: string } | null, who: string): Html {
  return html`<p class="notice" data-read-only>Your role in ${org?.name ?? 'this organization'} is ${org?.role ?? 'too low'}: you can read this; ${who}.</p>`;
}

/** A vine's cloud identity (issue 16): an assumed AWS role, or an OIDC federation per cloud. */
function cloudIdentityView(identity: VineView['cloud_identity']): Html {
  if (!identity) return html`<span class="muted">none</span>`;
  if (identity.kind === 'assume_role') {
    return html`AWS role <code>${identity.role_arn}</code> (assumed with an external id)`;
  }
  switch (identity.provider) {
    case 'aws':
      return html`OIDC: AWS role <code>${identity.role_arn}</code>${identity.audience ? html`, audience <code>${identity.audience}</code>` : ''}`;
    case 'gcp':
      return html`OIDC: Google Cloud provider <code>${identity.workload_identity_provider}</code>${identity.service_account_email ? html`, service account <code>${identity.service_account_email}</code>` : ''}`;
    case 'azure':
      return html`OIDC: Azure client <code>${identity.client_id}</code> in tenant <code>${identity.tenant_id}</code>`;
  }
}
