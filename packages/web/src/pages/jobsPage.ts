import type { JobSummary, PageResult } from '@trellis/core';
import { html } from '../html.js';
import type { Page } from '../layout.js';
import { jobTable } from './vinePage.js';
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
}): Page {
  const { base, jobs, filters, now } = input;
  return {
    title: 'Jobs',
    section: 'jobs',
    orgFilter: { path: '/jobs', value: filters.org_id ?? '' },
    body: html`<h1>Jobs</h1>
<section class="card">
${
  jobs.items.length === 0
    ? html`<p class="muted">No jobs yet. Open a vine and plan it, or run <code>trellis plan NAME</code>.</p>`
    : jobTable(base, jobs.items, now, true)
}
${olderLink(`${base}/jobs`, jobs, { ...filters })}
</section>`,
  };
}
