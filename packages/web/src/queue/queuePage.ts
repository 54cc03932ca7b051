import { describeAgentPool, describePoolAgents, type QueueEntryView, type QueueView } from '@trellis/core';
import { duration, jobTypeLabel, shortId, utc } from '../format.js';
import { type Html, html } from '../html.js';
import type { Page } from '../layout.js';
import { ownerTag } from '../pages/vineyardPages.js';
import type { Standing } from '../standing.js';

/**
 * The job queue (issue 29): the queued jobs the person may read, in the order agents claim them,
 * with the agents that can take each and why it waits. Positions and reasons are core's.
 */
export function queuePage(input: {
  base: string;
  queue: QueueView;
  standing: Standing;
  /** `?org_id=` as given: '' for every queue the person sees. */
  orgFilter: string;
  /** The stream the list follows (`GET /live/queue`); null or absent: a plain list. */
  live?: string | null;
}): Page {
  const { base, queue, standing, orgFilter } = input;
  return {
    title: 'Queue',
    section: 'queue',
    orgFilter: { path: '/queue', value: orgFilter },
    body: html`<h1>Queue</h1>
<section class="card">
${
  input.live
    ? html`<div data-queue-list hx-ext="sse" sse-connect="${input.live}" sse-swap="rows">${queueList(base, queue, standing)}</div>`
    : html`<div data-queue-list>${queueList(base, queue, standing)}</div>`
}
<p class="muted small">A DEPLOY of a plan keeps its plan's place in the queue; the jobs of one configuration run one at a time, in the order they were queued.</p>
</section>`,
  };
}

/**
 * The queued jobs and how many there are: what the page shows, and what its live stream
 * (`GET /live/queue`) sends again whole when a job is queued, starts or ends — every position
 * may change then.
 */
export function queueList(base: string, queue: QueueView, standing: Standing): Html {
  return queue.jobs.length === 0
    ? html`<p class="muted" data-queue-empty>No job is queued: agents take every job as soon as it is queued.</p>`
    : html`<p data-queue-total>${queue.total === 1 ? '1 job is queued' : `${queue.total} jobs are queued`}${
        queue.total > queue.jobs.length ? `; the first ${queue.jobs.length} are shown` : ''
      }. Each owner's agents take its jobs in position order: a person's jobs run on their own agents, an organization's on its pool.</p>
<div class="table-scroll" role="region" aria-label="Queued jobs" tabindex="0"><table class="queue">
  <thead><tr><th scope="col">Position</th><th scope="col">Job</th><th scope="col">Configuration</th><th scope="col">Vineyard</th><th scope="col">Waited</th><th scope="col">Agent pool</th><th scope="col">Why it waits</th></tr></thead>
  <tbody>
  ${queue.jobs.map((entry) => queueRow(base, standing, entry))}
  </tbody>
</table></div>`;
}

function queueRow(base: string, standing: Standing, entry: QueueEntryView): Html {
  const { job, pool } = entry;
  return html`<tr id="queue-${job.id}" data-queue-job="${job.id}">
    <td data-position>${entry.position}</td>
    <td><a href="${base}/jobs/${job.id}">${jobTypeLabel(job)}</a> <span class="muted small"><code>${shortId(job.id)}</code></span></td>
    <td>${entry.vine ? html`<a href="${base}/configurations/${entry.vine.id}">${entry.vine.name}</a>` : (job.config_snapshot.target_worker?.name ?? html`<span class="muted">—</span>`)}</td>
    <td>${entry.vineyard ? html`<a href="${base}/vineyards/${entry.vineyard.id}">${entry.vineyard.name}</a>` : html`<span class="muted">—</span>`} ${ownerTag(standing, job.owner_id)}</td>
    <td><time datetime="${job.created_at}" title="queued ${utc(job.created_at)}">${duration(entry.waited_seconds * 1000)}</time></td>
    <td data-pool="${pool.kind}">${describeAgentPool(pool)}<br><span class="muted small" data-pool-agents>${describePoolAgents(pool.agents)}</span></td>
    <td data-waiting-for="${entry.waiting_for?.reason ?? 'none'}">${waitingCell(base, entry)}</td>
  </tr>`;
}

function waitingCell(base: string, entry: QueueEntryView): Html {
  const waiting = entry.waiting_for;
  if (!waiting) return html`<span class="muted">Nothing: an idle agent takes it at its next claim.</span>`;
  const link = waiting.job_id ? html` <a href="${base}/jobs/${waiting.job_id}">See that job.</a>` : '';
  return html`${waiting.message}.${link}`;
}
