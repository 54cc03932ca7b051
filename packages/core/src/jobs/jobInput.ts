import { isOneOf, JOB_STATUSES, JOB_TYPES, type JobType } from '../domain/enums.js';
import { ValidationError } from '../domain/errors.js';
import { optionalUuid, requireUuid } from '../domain/validation.js';
import type { RunOptions } from '../domain/records.js';
import type { JobFilter } from '../ports/JobStore.js';
import { parseRunOptions } from './runOptions.js';

/** `POST /api/jobs` as people send it. */
export interface CreateJobInput {
  job_type: unknown;
  configuration_id?: unknown;
  assigned_worker_id?: unknown;
  plan_job_id?: unknown;
  target_worker_id?: unknown;
  /** A PLAN of the vine's destruction (a destroy plan), which a DESTROY then applies. */
  destroy?: unknown;
  /** A PLAN's engine options (issue 27): `target`, `replace`, `refresh_only`, `refresh`. */
  run_options?: unknown;
}

export interface JobRequest {
  jobType: JobType;
  vineId: string | null;
  assignedWorkerId: string | null;
  planJobId: string | null;
  targetWorkerId: string | null;
  /** A destroy plan (a PLAN with `destroy: true`). */
  destroy: boolean;
  runOptions: RunOptions | null;
}

/** The fields of a job request, each checked, and how they go together (DESIGN §3). */
export function parseJobRequest(input: CreateJobInput): JobRequest {
  if (!isOneOf(JOB_TYPES, input.job_type)) {
    throw new ValidationError(`job_type must be one of ${JOB_TYPES.join(', ')}`, [
      { path: 'job_type', message: `must be one of ${JOB_TYPES.join(', ')}` },
    ]);
  }
  const jobType = input.job_type;
  const vineId = optionalUuid(input.configuration_id, 'configuration_id');
  const assignedWorkerId = optionalUuid(input.assigned_worker_id, 'assigned_worker_id');
  const planJobId = optionalUuid(input.plan_job_id, 'plan_job_id');
  const targetWorkerId = optionalUuid(input.target_worker_id, 'target_worker_id');
  if (jobType === 'DESTROY_WORKER' && targetWorkerId === null) {
    throw new ValidationError('a DESTROY_WORKER job needs target_worker_id', [
      { path: 'target_worker_id', message: 'required for DESTROY_WORKER' },
    ]);
  }
  if (jobType !== 'DESTROY_WORKER' && vineId === null) {
    throw new ValidationError(`a ${jobType} job needs configuration_id`, [
      { path: 'configuration_id', message: `required for ${jobType}` },
    ]);
  }
  if (planJobId !== null && jobType !== 'DEPLOY' && jobType !== 'DESTROY') {
    throw new ValidationError('plan_job_id is only for DEPLOY and DESTROY jobs', [
      { path: 'plan_job_id', message: 'only for DEPLOY and DESTROY' },
    ]);
  }
  if (input.destroy !== undefined && input.destroy !== null && typeof input.destroy !== 'boolean') {
    throw new ValidationError('destroy must be a boolean', [{ path: 'destroy', message: 'must be a boolean' }]);
  }
  const destroy = input.destroy === true;
  if (destroy && jobType !== 'PLAN') {
    throw new ValidationError('destroy is only for PLAN jobs (a destroy plan)', [
      { path: 'destroy', message: 'only for PLAN' },
    ]);
  }
  if (assignedWorkerId !== null && assignedWorkerId === targetWorkerId) {
    throw new ValidationError('a worker cannot run its own DESTROY_WORKER job', [
      { path: 'assigned_worker_id', message: 'must differ from target_worker_id' },
    ]);
  }
  const runOptions = parseRunOptions(input.run_options);
  if (runOptions !== null && jobType !== 'PLAN') {
    throw new ValidationError('run_options are only for PLAN jobs (a DEPLOY applies its plan as planned)', [
      { path: 'run_options', message: 'only for PLAN' },
    ]);
  }
  if (runOptions?.refresh_only && destroy) {
    throw new ValidationError('a destroy plan cannot be refresh-only', [
      { path: 'run_options.refresh_only', message: 'not with destroy' },
    ]);
  }
  return { jobType, vineId, assignedWorkerId, planJobId, targetWorkerId, destroy, runOptions };
}

const MAX_ERROR_MESSAGE = 4000;

/** An agent's `error_message`: a string, cut to a size people read. */
export function parseErrorMessage(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') {
    throw new ValidationError('error_message must be a string', [
      { path: 'error_message', message: 'must be a string' },
    ]);
  }
  return value.length > MAX_ERROR_MESSAGE ? `${value.slice(0, MAX_ERROR_MESSAGE)}…` : value;
}

/** The filters of `GET /api/jobs`: a status, a vineyard, a vine. */
export function parseJobFilter(query: { status?: unknown; vineyard_id?: unknown; vine_id?: unknown }): JobFilter {
  const filter: JobFilter = {};
  if (query.status !== undefined) {
    if (!isOneOf(JOB_STATUSES, query.status)) {
      throw new ValidationError(`status must be one of ${JOB_STATUSES.join(', ')}`, [
        { path: 'status', message: `must be one of ${JOB_STATUSES.join(', ')}` },
      ]);
    }
    filter.status = query.status;
  }
  if (query.vineyard_id !== undefined) filter.vineyard_id = requireUuid(query.vineyard_id, 'vineyard_id');
  if (query.vine_id !== undefined) filter.vine_id = requireUuid(query.vine_id, 'vine_id');
  return filter;
}
