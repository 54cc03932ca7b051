import type { PageResult, WorkerView } from '@trellis/core';
import { badge, when } from '../format.js';
import { html } from '../html.js';
import type { Page } from '../layout.js';
import { filteredOwner, type Standing } from '../standing.js';
import { olderLink } from './olderLink.js';
import { ownerTag } from './vineyardPages.js';

/** The agents: whether they are alive, what they run and when they last said so. */
export function workersPage(input: {
  base: string;
  workers: PageResult<WorkerView>;
  standing: Standing;
  /** `?org_id=` as given: '' for every agent the person sees. */
  orgFilter: string;
  now: Date;
}): Page {
  const { base, workers, now, standing, orgFilter } = input;
  const owner = filteredOwner(standing, orgFilter);
  const org = owner === null ? null : standing.org(owner);
  const mayRegister = owner === null || standing.may(owner, 'agents.manage');
  const live = workers.items.filter((worker) => worker.status !== 'DESTROYED');
  return {
    title: 'Workers',
    section: 'workers',
    orgFilter: { path: '/workers', value: orgFilter },
    body: html`<h1>Workers${org ? html` <span class="muted small">of ${org.name}</span>` : ''}</h1>
<section class="card">
${
  live.length === 0
    ? mayRegister
      ? html`<p>No agents yet. Register one, then start it on a machine of yours:</p>
<pre class="command">trellis workers register --name my-agent${org ? ` --org ${org.name}` : ''}</pre>`
      : html`<p>No agents in ${org?.name ?? 'this organization'} yet; its admins register them.</p>`
    : html`<div class="table-scroll" role="region" aria-label="Workers" tabindex="0"><table class="workers">
  <thead><tr><th>Name</th><th>Status</th><th>Mode</th><th>Version</th><th>Last heartbeat</th><th>Registered</th><th>ID</th></tr></thead>
  <tbody>
  ${live.map(
    (worker) => html`<tr id="worker-${worker.id}">
    <td>${worker.name} ${ownerTag(standing, worker.owner_id)}</td>
    <td>${badge(worker.status)}</td>
    <td>${worker.mode}</td>
    <td>${worker.version ?? html`<span class="muted">—</span>`}</td>
    <td>${when(worker.last_heartbeat, now)}</td>
    <td>${when(worker.created_at, now)}</td>
    <td><code>${worker.id}</code></td>
  </tr>`,
  )}
  </tbody>
</table></div>
<p class="muted small">An agent is OFFLINE when it has sent no heartbeat for 60 seconds, BUSY while it runs a job.</p>`
}
${olderLink(`${base}/workers`, workers, orgFilter ? { org_id: orgFilter } : {})}
</section>`,
  };
}
