import type { PageResult, WorkerView } from '@trellis/core';
import { badge, when } from '../format.js';
import { html } from '../html.js';
import type { Page } from '../layout.js';
import { olderLink } from './olderLink.js';

/** The agents: whether they are alive, what they run and when they last said so. */
export function workersPage(input: { base: string; workers: PageResult<WorkerView>; now: Date }): Page {
  const { base, workers, now } = input;
  const live = workers.items.filter((worker) => worker.status !== 'DESTROYED');
  return {
    title: 'Workers',
    section: 'workers',
    body: html`<h1>Workers</h1>
<section class="card">
${
  live.length === 0
    ? html`<p>No agents yet. Register one, then start it on a machine of yours:</p>
<pre class="command">trellis workers register --name my-agent</pre>`
    : html`<table class="workers">
  <thead><tr><th>Name</th><th>Status</th><th>Mode</th><th>Version</th><th>Last heartbeat</th><th>Registered</th><th>ID</th></tr></thead>
  <tbody>
  ${live.map(
    (worker) => html`<tr id="worker-${worker.id}">
    <td>${worker.name}</td>
    <td>${badge(worker.status)}</td>
    <td>${worker.mode}</td>
    <td>${worker.version ?? html`<span class="muted">—</span>`}</td>
    <td>${when(worker.last_heartbeat, now)}</td>
    <td>${when(worker.created_at, now)}</td>
    <td><code>${worker.id}</code></td>
  </tr>`,
  )}
  </tbody>
</table>
<p class="muted small">An agent is OFFLINE when it has sent no heartbeat for 60 seconds, BUSY while it runs a job.</p>`
}
${olderLink(`${base}/workers`, workers)}
</section>`,
  };
}
