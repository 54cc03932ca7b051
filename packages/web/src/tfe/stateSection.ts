import type { StateHistory } from '@trellis/core';
import { utc } from '../format.js';
import { type Html, html } from '../html.js';

/**
 * The state of a vine on its page (issue 26): one history whoever wrote each version (a Trellis
 * job, a person's CLI through the cloud block, a rollback), who holds the lock, and for admins
 * a rollback button per older version (the JSON API, `POST …/state-versions/{id}/rollback`).
 */
export function stateSection(input: {
  base: string;
  history: StateHistory;
  /** Admins: a rollback button per older version (issue 29: `state.rollback`). */
  mayRollback: boolean;
  /** Admins: a force-unlock button beside a held lock (`DELETE …/state-lock`, audited). */
  mayForceUnlock?: boolean;
  executionMode: string;
  tags: string[];
}): Html {
  const { history, base } = input;
  const lock = history.lock;
  const late = history.state_after_lost;
  const current = history.versions.find((version) => !version.rejected);
  return html`<section class="card" data-state-section>
  <h2>State</h2>
  <p><a href="${base}/configurations/${history.vine_id}/state" data-state-page-link>Resources, outputs, versions and lock →</a></p>
  ${
    late
      ? html`<p class="notice warning" data-state-after-lost="${String(late.version_id)}">A job's agent was lost while its engine ran: version ${String(late.version_id)}${late.job_id ? html` (<a href="${base}/jobs/${late.job_id}">its job</a>)` : ''} was stored after the job was failed, ${late.rejected ? html`and <strong>rejected</strong>: a later job had the configuration, so it is kept for recovery only` : html`as the current state`}. Review what it created.${
          input.mayForceUnlock
            ? html` <button type="button" class="button small" data-state-after-lost-ack="${history.vine_id}" data-confirm="Mark the late state reviewed?">Acknowledge</button>`
            : ''
        }</p>`
      : ''
  }
  <dl class="facts">
    <dt>Lock</dt><dd data-state-lock>${
      lock
        ? html`held by <strong>${String(lock.info.Who ?? lock.lock_id)}</strong> since ${utc(lock.created_at)}${
            input.mayForceUnlock
              ? html` <button type="button" class="button small danger" data-state-unlock="${history.vine_id}" data-confirm="Force-unlock this state? Only do this when no engine is still writing it.">Force-unlock</button>`
              : ''
          }`
        : html`<span class="muted">free</span>`
    }</dd>
    <dt>Execution</dt><dd><code data-execution-mode>${input.executionMode}</code>${input.tags.length > 0 ? html` · tags ${input.tags.map((tag) => html`<code>${tag}</code> `)}` : ''}</dd>
  </dl>
  ${
    history.versions.length === 0
      ? html`<p class="muted">No state yet. A deploy, or <code>tofu apply</code> through the cloud block, writes the first version.</p>`
      : html`<div class="table-scroll" role="region" aria-label="State versions" tabindex="0"><table class="table" data-state-versions>
  <thead><tr><th>Version</th><th>Serial</th><th>Size</th><th>Written by</th><th>Created</th>${input.mayRollback ? html`<th></th>` : ''}</tr></thead>
  <tbody>${history.versions.slice(0, 20).map(
    (version) => html`<tr data-state-version="${String(version.id)}">
    <td>${String(version.id)}${version === current ? html` <span class="badge">current</span>` : ''}${version.rejected ? html` <span class="badge danger">rejected</span>` : version.after_lost ? html` <span class="badge warning">late</span>` : ''}</td>
    <td>${String(version.serial)}</td>
    <td>${String(version.size)} B</td>
    <td>${version.job_id ? html`<a href="${base}/jobs/${version.job_id}">a job</a>` : version.created_by ? 'a person (CLI or rollback)' : '—'}</td>
    <td>${utc(version.created_at)}</td>
    ${
      input.mayRollback
        ? html`<td>${
            version === current
              ? ''
              : html`<button type="button" class="button small" data-state-rollback="${String(version.id)}" data-configuration-id="${history.vine_id}" data-confirm="Make version ${String(version.id)} the current state?">Roll back to this</button>`
          }</td>`
        : ''
    }
  </tr>`,
  )}</tbody>
</table></div>`
  }
</section>`;
}
