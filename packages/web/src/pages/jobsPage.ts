import type { JobSummary, PageResult } from '@trellis/core';
import { html } from '../html.js';
import type { Page } from '../layout.js';
import { liveJobList } from '../live/jobLists.js';
import { olderLink } from './olderLink.js';

/** The query filters `/jobs` accepts, as given (core checks them). */
export interface JobListFilters {
  status?: string;
  vineyard_id?: string;
  vine_id?: string;
  /** `''` (everything), `personal`, or an organization's id. */
  org_id?: string;
}

/** The jobs of every vine, newest first, a page at a time. */
export function jobsPage(input: {
  base: string;
  jobs: PageResult<JobSummary>;
  filters: JobListFilters;
  now: Date;
  /** The stream the list follows (`GET /live/jobs`); null: a plain list (an older page). */
  live?: string | null;
}): Page {
  const { base, jobs, filters, now } = input;
  return {
    title: 'Jobs',
    section: 'jobs',
    orgFilter: { path: '/jobs', value: filters.org_id ?? '' },
    body: html`<h1>Jobs</h1>
<section class="card">
${liveJobList(base, 'jobs', jobs.items, now, input.live ?? null)}
${olderLink(`${base}/jobs`, jobs, { ...filters })}
</section>`,
  };
}
