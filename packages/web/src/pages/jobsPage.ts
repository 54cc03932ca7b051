import type { Job } from '@trellis/core';
import { html } from '../html.js';
import type { Page } from '../layout.js';
import { jobTable } from './configurationPage.js';

/** The newest jobs of every vine. */
export function jobsPage(input: {
  base: string;
  jobs: Job[];
  vineNames: ReadonlyMap<string, string>;
  now: Date;
}): Page {
  const { base, jobs, vineNames, now } = input;
  return {
    title: 'Jobs',
    section: 'jobs',
    body: html`<h1>Jobs</h1>
<section class="card">
${
  jobs.length === 0
    ? html`<p class="muted">No jobs yet. Open a vine and plan it, or run <code>trellis plan NAME</code>.</p>`
    : jobTable(base, jobs, now, vineNames)
}
</section>`,
  };
}
