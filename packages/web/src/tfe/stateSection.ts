import type { StateHistory } from '@trellis/core';
import { utc } from '../format.js';
import { type Html, html } from '../html.js';

/**
 * The state of a vine on its page (issue 26): one history whoever wrote each version (a Trellis
 * job, a person's CLI through the cloud block, a rollback), who holds the lock, and for admins
 * a rollback button per older version (forms posted to the state page's routes).
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
  // The state page's forms (issue 29): each asks first, then lands on the state page.
  const path = `${base}/configurations/${history.vine_id}/state`;
  return html`<section class="card" data-state-section>
  <h2>State</h2>
  <p><a href="${base}/configurations/${history.vine_id}/state" data-state-page-link>Resources, outputs, versions and lock →</a></p>
  ${
    late
      ? html`<div class="notice warning" data-state-after-lost="${String(late.version_id)}">A job's agent was lost while its engine ran: version ${String(late.version_id)}${late.job_id ? html` (<a href="${base}/jobs/${late.job_id}">its job</a>)` : ''} was stored after the job was failed, ${late.rejected ? html`and <strong>rejected</strong>: a later job had the configuration, so it is kept for recovery only` : html`as the current state`}. Review what it created.${
          input.mayForceUnlock
            ? html` <form method="post" action="${path}/acknowledge" class="inline-form button-form"><button type="submit" class="button small" data-state-after-lost-ack="${history.vine_id}">Acknowledge…</button></form>`
            : ''
        }</div>`
      : ''
  }
  <dl class="facts">
    <dt>Lock</dt><dd data-state-lock>${
      lock
        ? html`held by <strong>${String(lock.info.Who ?? lock.lock_id)}</strong> since ${utc(lock.created_at)}${
            input.mayForceUnlock
              ? html` <form method="post" action="${path}/unlock" class="inline-form button-form"><button type="submit" class="button small danger" data-state-unlock="${history.vine_id}">Force-unlock…</button></form>`
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
              : html`<form method="post" action="${path}/versions/${String(version.id)}/rollback" class="inline-form button-form"><button type="submit" class="button small" data-state-rollback="${String(version.id)}" aria-label="Roll back to version ${String(version.id)}">Roll back to this…</button></form>`
          }</td>`
        : ''
    }
  </tr>`,
  )}</tbody>
</table></div>`
  }
</section>`;
}
