import type { Job } from '../domain/jobRecords.js';
import { parseOwnerFilter } from '../usecases/Access.js';
import { parseJobFilter } from './jobInput.js';

/** The filters of a list of jobs (`GET /api/jobs`, the web's `/jobs`), as given. */
export interface JobListQuery {
  status?: unknown;
  vineyard_id?: unknown;
  vine_id?: unknown;
  org_id?: unknown;
}

/**
 * Whether a job the viewer may read belongs in their list of jobs with these filters: the rule the
 * store's query applies, for one job that changed (a live list's rows, issue 29). Throws as the
 * list does for filters it refuses.
 */
export function jobListMatcher(
  query: JobListQuery,
  viewerId: string,
): (job: Pick<Job, 'status' | 'vineyard_id' | 'vine_id' | 'owner_id'>) => boolean {
  const filter = parseJobFilter(query);
  const owners = parseOwnerFilter(query.org_id);
  return (job) =>
    (filter.status === undefined || job.status === filter.status) &&
    (filter.vineyard_id === undefined || job.vineyard_id === filter.vineyard_id) &&
    (filter.vine_id === undefined || job.vine_id === filter.vine_id) &&
    (owners.kind === 'all' || (owners.kind === 'personal' ? job.owner_id === viewerId : job.owner_id === owners.orgId));
}
