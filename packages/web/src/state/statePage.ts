import {
  type Json,
  type StateHistory,
  type StateOutput,
  type StateResource,
  type StateVersion,
  shortenForDisplay,
  type VineView,
  type Vineyard,
} from '@trellis/core';
import { utc } from '../format.js';
import { type Html, html } from '../html.js';
import type { Page } from '../layout.js';
import type { FormProblem } from '../orgs/orgPages.js';

/** What the current state holds, read by a person who may read whole states (`state.use`). */
export interface CurrentState {
  version: StateVersion;
  resources: StateResource[];
  outputs: StateOutput[];
}

export interface StatePageInput {
  base: string;
  vine: VineView;
  vineyard: Vineyard | null;
  history: StateHistory;
  /** The current state's contents; null when the person may not read whole states (or there is none). */
  current: CurrentState | null;
  /** The email of each person who wrote a version, by user id (the organization's members). */
  people: ReadonlyMap<string, string>;
  userId: string;
  may: { download: boolean; rollback: boolean; forceUnlock: boolean; acknowledge: boolean };
  problem?: FormProblem | null;
  /** What the last form did (`?done=`), said once above the page. */
  done?: string | null;
}

const DONE: Record<string, string> = {
  'rolled-back': 'Rolled back: the version below marked current is the state the next job starts from.',
  unlocked: 'The state lock was released.',
  acknowledged: 'The late state is marked reviewed.',
};

/**
 * A vine's state (issue 29): the current state's resources and outputs (sensitive values masked),
 * every kept version with who wrote it, and the lock. Downloads go to the API's download of a
 * version; rollback, force-unlock and acknowledging a late state are form posts to the same use
 * cases as the API, shown only to those whose role allows them.
 */
export function statePage(input: StatePageInput): Page {
  const { base, vine, vineyard, history, problem } = input;
  const path = `${base}/configurations/${vine.id}/state`;
  const current = history.versions.find((version) => !version.rejected) ?? null;
  const done = input.done && Object.hasOwn(DONE, input.done) ? DONE[input.done] : undefined;
  return {
    ...(problem ? { status: problem.status } : {}),
    title: `State of ${vine.name}`,
    section: 'vineyards',
    body: html`<div class="state-page">
<p class="breadcrumbs"><a href="${base}/vineyards">Vineyards</a> /
  ${vineyard ? html`<a href="${base}/vineyards/${vineyard.id}">${vineyard.name}</a> /` : ''}
  <a href="${base}/configurations/${vine.id}">${vine.name}</a> /</p>
<h1>State of ${vine.name}</h1>
${problem ? html`<p class="error" role="alert" data-form-error>${problem.message}</p>` : ''}
${done ? html`<p class="notice" role="status" data-state-done="${input.done ?? ''}">${done}</p>` : ''}
${afterLostNotice(input, path)}
<section class="card" data-state-lock-section>
  <h2>Lock</h2>
  ${lockFacts(input, path)}
</section>
<section class="card" data-current-state>
  <h2>Current state</h2>
  ${currentFacts(input, current)}
</section>
${input.current ? contents(input.current) : ''}
<section class="card" data-state-versions-section>
  <h2>Versions</h2>
  ${versionsTable(input, path, current)}
</section>
</div>`,
  };
}

function afterLostNotice(input: StatePageInput, path: string): Html | string {
  const late = input.history.state_after_lost;
  if (!late) return '';
  return html`<section class="card" data-state-after-lost="${String(late.version_id)}">
  <h2>State written after a lost job</h2>
  <p class="notice warning">A job's agent was lost while its engine ran: version ${String(late.version_id)}${late.job_id ? html` (<a href="${input.base}/jobs/${late.job_id}">its job</a>)` : ''} was stored after the job was failed, ${late.rejected ? html`and <strong>rejected</strong>: a later job had the configuration, so it is kept for recovery only` : 'as the current state'}. Review what it created, then mark it reviewed.</p>
  ${
    input.may.acknowledge
      ? html`<form method="post" action="${path}/acknowledge" class="inline-form" data-acknowledge-form>
    <button type="submit" class="button" data-state-acknowledge>Acknowledge</button>
  </form>`
      : html`<p class="muted">An admin of the configuration's organization acknowledges it.</p>`
  }
</section>`;
}

function lockFacts(input: StatePageInput, path: string): Html {
  const lock = input.history.lock;
  if (!lock) return html`<p data-state-lock="free">The state is <strong>not locked</strong>.</p>`;
  const info = lock.info;
  const text = (value: Json | undefined) => (typeof value === 'string' && value !== '' ? value : null);
  return html`<dl class="facts" data-state-lock="held">
  <dt>Held by</dt><dd data-state-lock-holder>${text(info.Who) ?? lock.lock_id}</dd>
  ${text(info.Operation) ? html`<dt>Operation</dt><dd><code>${text(info.Operation)}</code></dd>` : ''}
  <dt>Lock id</dt><dd><code>${lock.lock_id}</code></dd>
  <dt>Since</dt><dd>${utc(lock.created_at)}</dd>
</dl>
${
  input.may.forceUnlock
    ? html`<form method="post" action="${path}/unlock" class="inline-form" data-force-unlock-form>
  <input type="hidden" name="lock_id" value="${lock.lock_id}">
  <button type="submit" class="button danger" data-state-force-unlock>Force unlock</button>
</form>`
    : html`<p class="muted">An admin may force-unlock a lock whose engine died.</p>`
}`;
}

function writer(input: StatePageInput, version: StateVersion): Html | string {
  if (version.job_id) return html`job <a href="${input.base}/jobs/${version.job_id}">${version.job_id.slice(0, 8)}</a>`;
  if (version.created_by) {
    if (version.created_by === input.userId) return 'you';
    return input.people.get(version.created_by) ?? 'a person (CLI, upload or rollback)';
  }
  return '—';
}

function currentFacts(input: StatePageInput, current: StateVersion | null): Html {
  if (!current) {
    return html`<p class="muted" data-no-state>No state yet. A deploy, or <code>tofu apply</code> through the cloud block, writes the first version.</p>`;
  }
  return html`<dl class="facts">
  <dt>Version</dt><dd data-current-version="${String(current.id)}">${String(current.id)}</dd>
  <dt>Serial</dt><dd data-current-serial>${String(current.serial)}</dd>
  <dt>Lineage</dt><dd><code data-current-lineage>${current.lineage}</code></dd>
  <dt>Written</dt><dd>${utc(current.created_at)} by <span data-current-writer>${writer(input, current)}</span></dd>
  <dt>Size</dt><dd>${String(current.size)} bytes</dd>
</dl>
${
  input.current
    ? ''
    : input.may.download
      ? html`<p class="muted">It is not a JSON state file: download it to read it.</p>`
      : html`<p class="muted">Its resources and outputs are shown to operators: the state may hold secrets.</p>`
}`;
}

/** The current state's resources by module, and its outputs with sensitive values masked. */
function contents(state: CurrentState): Html {
  const modules = new Map<string, StateResource[]>();
  for (const resource of state.resources) {
    modules.set(resource.module, [...(modules.get(resource.module) ?? []), resource]);
  }
  return html`<section class="card" data-state-resources>
  <h2>Resources (${String(state.resources.length)})</h2>
  ${
    state.resources.length === 0
      ? html`<p class="muted">The state manages no resources.</p>`
      : [...modules].map(
          ([
            module,
            resources,
          ]) => html`<h3 data-state-module="${module}">${module === '' ? 'Root module' : html`<code>${module}</code>`}</h3>
  <div class="table-scroll" role="region" aria-label="Resources" tabindex="0"><table class="table">
    <thead><tr><th scope="col">Address</th><th scope="col">Type</th><th scope="col">Provider</th><th scope="col">Mode</th><th scope="col">Instances</th></tr></thead>
    <tbody>${resources.map(
      (resource) => html`<tr data-state-resource="${resource.address}">
      <td><code>${resource.address}</code></td>
      <td><code>${resource.type}</code></td>
      <td><code>${providerName(resource.provider)}</code></td>
      <td>${resource.mode}</td>
      <td>${String(resource.instances)}</td>
    </tr>`,
    )}</tbody>
  </table></div>`,
        )
  }
</section>
<section class="card" data-state-outputs>
  <h2>Outputs (${String(state.outputs.length)})</h2>
  ${
    state.outputs.length === 0
      ? html`<p class="muted">The state has no outputs.</p>`
      : html`<div class="table-scroll" role="region" aria-label="Outputs" tabindex="0"><table class="table">
    <thead><tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Value</th></tr></thead>
    <tbody>${state.outputs.map(
      (output) => html`<tr data-state-output="${output.name}"${output.sensitive ? html` data-sensitive-output` : ''}>
      <th scope="row"><code>${output.name}</code></th>
      <td><code>${typeText(output.detailedType)}</code></td>
      <td>${
        output.sensitive
          ? html`<span class="muted">(sensitive)</span>`
          : html`<code>${shortenForDisplay(typeof output.value === 'string' ? output.value : JSON.stringify(output.value))}</code>`
      }</td>
    </tr>`,
    )}</tbody>
  </table></div>`
  }
</section>`;
}

/** `provider["registry.opentofu.org/hashicorp/aws"]` as `registry.opentofu.org/hashicorp/aws`. */
function providerName(provider: string): string {
  return /^provider\["(.+)"\]$/.exec(provider)?.[1] ?? provider;
}

/** A cty type in JSON form, as the engine's `type` spells it in HCL: `string`, `list(string)`, `object`. */
function typeText(type: Json): string {
  if (typeof type === 'string') return type;
  if (Array.isArray(type) && typeof type[0] === 'string') {
    const [head, inner] = type;
    return (head === 'list' || head === 'set' || head === 'map') && inner !== undefined
      ? `${head}(${typeText(inner)})`
      : head;
  }
  return 'dynamic';
}

function versionsTable(input: StatePageInput, path: string, current: StateVersion | null): Html {
  const { history, may } = input;
  if (history.versions.length === 0) return html`<p class="muted">No versions yet.</p>`;
  const apiPath = `${input.base}/api/cli/configurations/${input.vine.id}/state-versions`;
  return html`<p class="muted">Newest first: every kept version (the newest <code>TRELLIS_STATE_VERSIONS_KEPT</code>), whoever wrote it.</p>
<div class="table-scroll" role="region" aria-label="State versions" tabindex="0"><table class="table" data-state-versions>
  <thead><tr><th scope="col">Version</th><th scope="col">Serial</th><th scope="col">Written by</th><th scope="col">Created</th><th scope="col">Size</th>${may.download || may.rollback ? html`<th scope="col">Actions</th>` : ''}</tr></thead>
  <tbody>${history.versions.map(
    (version) => html`<tr data-state-version="${String(version.id)}">
    <td>${String(version.id)}${version === current ? html` <span class="badge" data-current>current</span>` : ''}${version.rejected ? html` <span class="badge danger" data-rejected>rejected</span>` : ''}${version.after_lost ? html` <span class="badge warning" data-after-lost>after lost job</span>` : ''}</td>
    <td>${String(version.serial)}</td>
    <td>${writer(input, version)}</td>
    <td>${utc(version.created_at)}</td>
    <td>${String(version.size)} B</td>
    ${
      may.download || may.rollback
        ? html`<td class="row-actions">${
            may.download
              ? html`<a class="button small" href="${apiPath}/${String(version.id)}/state" download="${input.vine.name}-${String(version.serial)}.tfstate" data-state-download="${String(version.id)}" aria-label="Download version ${String(version.id)}">Download</a>`
              : ''
          }${
            may.rollback && version !== current
              ? html` <form method="post" action="${path}/versions/${String(version.id)}/rollback" class="inline-form" data-rollback-form="${String(version.id)}">
      <button type="submit" class="button small" data-state-rollback-to="${String(version.id)}" aria-label="Roll back to version ${String(version.id)}">Roll back to this version</button>
    </form>`
              : ''
          }</td>`
        : ''
    }
  </tr>`,
  )}</tbody>
</table></div>`;
}
