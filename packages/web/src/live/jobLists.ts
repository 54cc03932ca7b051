import type { JobSummary, JobView } from '@trellis/core';
import { badge, commitCell, jobDuration, jobTypeLabel, shortId, when } from '../format.js';
import { type Html, html } from '../html.js';

/**
 * The lists of jobs a page shows, each as one template for the whole list and one for a row: the
 * page renders them, and the live stream (`GET /live/jobs`, `LiveLists`) sends the same row (or,
 * on connect, the same list) when a job is queued, starts or ends.
 */
export const JOB_LIST_VIEWS = {
  /** `/jobs`: every vine's jobs, with the vine's name. */
  jobs: {
    withVine: true,
    withCommit: false,
    empty: html`No jobs yet. Open a vine and plan it, or run <code>trellis plan NAME</code>.`,
  },
  /** A vine's page: its last jobs, with the commit each ran. */
  vine: { withVine: false, withCommit: true, empty: html`No jobs yet: plan this vine to see what it would change.` },
} as const;

export type JobListView = keyof typeof JOB_LIST_VIEWS;

export function isJobListView(value: unknown): value is JobListView {
  return typeof value === 'string' && Object.hasOwn(JOB_LIST_VIEWS, value);
}

/** What a row shows of a job: a list's summary, or the job read alone when it changed. */
export type JobRowJob = JobSummary | JobView;

/** The id of the list's `tbody`, where a new job's row comes in (one job list per page). */
const JOB_LIST_ROWS = 'job-list-rows';

/** The list's element id of a job's row (what a changed row replaces). */
export function jobRowId(jobId: string): string {
  return `job-row-${jobId}`;
}

/** One job's row; `replace`: sent live (out of band) for a row the page has, replaced in place. */
export function jobRow(
  base: string,
  view: JobListView,
  job: JobRowJob,
  now: Date,
  swap: 'insert' | 'replace' = 'insert',
): Html {
  const { withVine, withCommit } = JOB_LIST_VIEWS[view];
  return html`<tr id="${jobRowId(job.id)}" data-job-row="${job.id}"${swap === 'replace' ? html` hx-swap-oob="true"` : ''}>
    <td><a href="${base}/jobs/${job.id}">${jobTypeLabel(job)}</a> <span class="muted small"><code>${shortId(job.id)}</code></span></td>
    ${withVine ? html`<td>${job.config_snapshot.vine?.name ?? job.config_snapshot.target_worker?.name ?? '—'}</td>` : ''}
    ${withCommit ? html`<td>${commitCell(job)}</td>` : ''}
    <td>${badge(job.status)}</td>
    <td>${when(job.created_at, now)}</td>
    <td>${jobDuration(job, now)}</td>
  </tr>`;
}

/** Sent live for a job the page does not list yet: its row, at the top of the list. */
export function newJobRow(base: string, view: JobListView, job: JobRowJob, now: Date): Html {
  return html`<tbody hx-swap-oob="afterbegin:#${JOB_LIST_ROWS}">${jobRow(base, view, job, now)}</tbody>`;
}

/** Sent live for a row the page has whose job left the list (its filters, or the viewer's reach). */
export function removedJobRow(jobId: string): Html {
  return html`<tr id="${jobRowId(jobId)}" hx-swap-oob="delete"></tr>`;
}

/** The list: its table, or a note when it is empty. */
export function jobList(base: string, view: JobListView, jobs: readonly JobRowJob[], now: Date): Html {
  const { withVine, withCommit, empty } = JOB_LIST_VIEWS[view];
  if (jobs.length === 0) return html`<p class="muted" data-no-jobs>${empty}</p>`;
  return html`<div class="table-scroll" role="region" aria-label="Jobs" tabindex="0"><table class="jobs">
  <thead><tr><th>Job</th>${withVine ? html`<th>Vine</th>` : ''}${withCommit ? html`<th>Commit</th>` : ''}<th>Status</th><th>Created</th><th>Duration</th></tr></thead>
  <tbody id="${JOB_LIST_ROWS}">
  ${jobs.map((job) => jobRow(base, view, job, now))}
  </tbody>
</table></div>`;
}

/**
 * The list as a page shows it. With `stream` (the first page of a list, when the server streams
 * rows) it follows `GET /live/jobs` through htmx's SSE extension: a new job's row comes in at the
 * top, a changed one replaces its row, and on (re)connect the whole list is sent again, so nothing
 * that happened while it was away is missed. Without JavaScript it is the plain list.
 */
export function liveJobList(
  base: string,
  view: JobListView,
  jobs: readonly JobRowJob[],
  now: Date,
  stream: string | null,
): Html {
  if (stream === null) return html`<div data-job-list="${view}"><div>${jobList(base, view, jobs, now)}</div></div>`;
  // Both listeners stay for the page's life (a `row`'s swaps are all out of band, by id), so a
  // row sent right after the list is never lost while the list's new table is settling.
  return html`<div data-job-list="${view}" hx-ext="sse" sse-connect="${stream}" sse-swap="row" hx-swap="none"><div sse-swap="rows" hx-swap="innerHTML">${jobList(base, view, jobs, now)}</div></div>`;
}

/** The stream a list's page follows: `/live/jobs?view=…` and the list's own filters. */
export function jobListStream(
  base: string,
  view: JobListView,
  filters: Readonly<Record<string, string | undefined>>,
): string {
  const query = new URLSearchParams({ view });
  for (const [name, value] of Object.entries(filters)) if (value) query.set(name, value);
  return `${base}/live/jobs?${query}`;
}
