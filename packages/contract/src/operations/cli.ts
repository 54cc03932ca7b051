/** Vineyards, configurations, jobs and workers: each operation as data (served by `http/src/routes/cliRoutes.ts`). */
import { operation } from '../operation.js';
import { PAGED_LIST_DESCRIPTION, PAGED_LIST_HEADERS } from '../paging.js';
import {
  ConfigurationList,
  CreateConfigurationBody,
  CreateJobBody,
  CreateVineyardBody,
  IdParams,
  Job,
  JobDetail,
  JobList,
  ListConfigurationsQuery,
  ListJobsQuery,
  LogPage,
  LogQuery,
  NameParams,
  OrgFilterQuery,
  PlanChangesResponse,
  ProjectNameParams,
  RegisterWorkerBody,
  RegistrationResponse,
  VineDetail,
  Vineyard,
  VineyardList,
  Worker,
  WorkerList,
} from '../schemas.js';

export const listVineyards = operation({
  method: 'get',
  path: '/api/cli/vineyards',
  operationId: 'listVineyards',
  summary: 'Vineyards with their vines (summaries), newest first',
  description: PAGED_LIST_DESCRIPTION,
  tags: ['vineyards'],
  auth: 'user',
  query: OrgFilterQuery,
  responses: {
    200: {
      description: 'A page of vineyards',
      schema: VineyardList,
      headers: PAGED_LIST_HEADERS,
    },
  },
});

export const createVineyard = operation({
  method: 'post',
  path: '/api/cli/vineyards',
  operationId: 'createVineyard',
  summary: 'Create a vineyard',
  tags: ['vineyards'],
  auth: 'user',
  body: CreateVineyardBody,
  responses: { 201: { description: 'The vineyard', schema: Vineyard } },
});

export const getVineyard = operation({
  method: 'get',
  path: '/api/cli/vineyards/{id}',
  operationId: 'getVineyard',
  summary: 'One vineyard with its vines',
  tags: ['vineyards'],
  auth: 'user',
  params: IdParams,
  responses: { 200: { description: 'The vineyard', schema: Vineyard } },
});

export const listConfigurations = operation({
  method: 'get',
  path: '/api/cli/configurations',
  operationId: 'listConfigurations',
  summary: 'Vine configurations the caller may read (summaries), newest first; the fleet',
  description: `${PAGED_LIST_DESCRIPTION} Every configuration of the caller and of their organizations (or of \`org_id\`), filtered by \`status\`, \`drift\`, \`policy\`, \`tag\` and last change (\`changed_since\`, \`changed_before\`); \`counts=true\` adds \`counts\`: how many stand each way over every page of the filter.`,
  tags: ['configurations'],
  auth: 'user',
  query: ListConfigurationsQuery,
  responses: {
    200: {
      description: 'A page of vines',
      schema: ConfigurationList,
      headers: PAGED_LIST_HEADERS,
    },
  },
});

export const getConfigurationByProjectName = operation({
  method: 'get',
  path: '/api/cli/configurations/by-project-name/{project_name}',
  operationId: 'getConfigurationByProjectName',
  summary: 'The vine with this project name',
  tags: ['configurations'],
  auth: 'user',
  params: ProjectNameParams,
  responses: { 200: { description: 'The vine', schema: VineDetail } },
});

export const getConfiguration = operation({
  method: 'get',
  path: '/api/cli/configurations/{name}',
  operationId: 'getConfiguration',
  summary: 'The vine with this name (or id)',
  tags: ['configurations'],
  auth: 'user',
  params: NameParams,
  responses: { 200: { description: 'The vine', schema: VineDetail } },
});

export const createConfiguration = operation({
  method: 'post',
  path: '/api/cli/configurations',
  operationId: 'createConfiguration',
  summary: 'Create a vine configuration',
  description:
    'The source is a git repository (`{type:"git", url, ref?, path?}`) or files sent inline (`{type:"inline", files:{"main.tf": "..."}}`). Variables are strings or `{value, sensitive}`; sensitive values are never shown again. `tags` (letters, digits, `:`, `_`, `.`, `-`; kept lower case) are what the fleet filters by (`?tag=`); `triggers: {after: [configuration ids]}` runs it after a successful DEPLOY of any of those (the same owner). Every bad field is named at once (400 `validation_failed`).',
  tags: ['configurations'],
  auth: 'user',
  body: CreateConfigurationBody,
  bodyLimit: 8 * 1024 * 1024,
  responses: { 201: { description: 'The vine', schema: VineDetail } },
});

export const createJob = operation({
  method: 'post',
  path: '/api/jobs',
  operationId: 'createJob',
  summary: 'Queue a job',
  description:
    'PLAN, DEPLOY and DESTROY need `configuration_id`; DEPLOY may name a successful `plan_job_id` (409 `plan_stale`, `plan_already_applied` or `plan_not_ready` otherwise); DESTROY_WORKER needs `target_worker_id`. A plan that failed a mandatory policy deploys only once overridden (409 `policy_failed`, with `failed_policies`); a rejected plan never (409 `plan_rejected`); a configuration that requires approval deploys only an approved plan, and never without one (409 `approval_required`).',
  tags: ['jobs'],
  auth: 'user',
  body: CreateJobBody,
  responses: { 201: { description: 'The job', schema: Job } },
});

export const listJobs = operation({
  method: 'get',
  path: '/api/jobs',
  operationId: 'listJobs',
  summary: 'Jobs of the user (summaries), newest first',
  description: PAGED_LIST_DESCRIPTION,
  tags: ['jobs'],
  auth: 'user',
  query: ListJobsQuery,
  responses: {
    200: {
      description: 'A page of jobs',
      schema: JobList,
      headers: PAGED_LIST_HEADERS,
    },
  },
});

export const getJob = operation({
  method: 'get',
  path: '/api/cli/jobs/{id}',
  operationId: 'getJob',
  summary: 'Status and metadata of a job',
  tags: ['jobs'],
  auth: 'user',
  params: IdParams,
  description:
    'With `waiting_for`: why a queued job waits (no agent online for its owner, its configuration busy with another job, every agent busy), or why a plan waits for an approval; null when it does not wait.',
  responses: { 200: { description: 'The job', schema: JobDetail } },
});

export const readJobLogs = operation({
  method: 'get',
  path: '/api/cli/jobs/{id}/logs',
  operationId: 'readJobLogs',
  summary: 'The log of a job, in order',
  tags: ['jobs'],
  auth: 'user',
  params: IdParams,
  query: LogQuery,
  responses: { 200: { description: 'A page of log chunks', schema: LogPage } },
});

export const getPlanChanges = operation({
  method: 'get',
  path: '/api/cli/jobs/{id}/plan/changes',
  operationId: 'getPlanChanges',
  summary: "A plan's resource and output changes, attribute by attribute (sensitive values masked)",
  description:
    'The change document the agent derived from the engine\'s plan: each changed resource (no-op and read-only ones left out) with its module, actions and attribute diff, and each changed output. A value the plan marks sensitive is `{"sensitive": true}` (it never left the agent), a value known only after apply `{"unknown": true}`. Bounded: `truncated` with the `*_omitted` counts says what was left out. `404 plan_changes_not_found` for a job that is not a PLAN, has not succeeded, or was planned by an agent older than change documents.',
  tags: ['jobs'],
  auth: 'user',
  params: IdParams,
  responses: { 200: { description: 'The change document', schema: PlanChangesResponse } },
});

export const cancelJob = operation({
  method: 'post',
  path: '/api/cli/jobs/{id}/cancel',
  operationId: 'cancelJob',
  summary: 'Cancel a QUEUED or PROCESSING job',
  tags: ['jobs'],
  auth: 'user',
  params: IdParams,
  responses: { 200: { description: 'The cancelled job', schema: Job } },
});

export const listWorkers = operation({
  method: 'get',
  path: '/api/cli/workers',
  operationId: 'listWorkers',
  summary: 'Agents of the user, newest first',
  description: PAGED_LIST_DESCRIPTION,
  tags: ['workers'],
  auth: 'user',
  query: OrgFilterQuery,
  responses: {
    200: {
      description: 'A page of workers',
      schema: WorkerList,
      headers: PAGED_LIST_HEADERS,
    },
  },
});

export const registerSelfHostedWorker = operation({
  method: 'post',
  path: '/api/cli/workers',
  operationId: 'registerSelfHostedWorker',
  summary: 'Register a self-hosted agent',
  tags: ['workers'],
  auth: 'user',
  body: RegisterWorkerBody,
  responses: { 201: { description: 'Credentials, shown only once', schema: RegistrationResponse } },
});

export const getWorker = operation({
  method: 'get',
  path: '/api/cli/workers/{id}',
  operationId: 'getWorker',
  summary: 'One agent',
  tags: ['workers'],
  auth: 'user',
  params: IdParams,
  responses: { 200: { description: 'The worker', schema: Worker } },
});

/** In the order the API reference lists them. */
export const cliOperations = {
  listVineyards,
  createVineyard,
  getVineyard,
  listConfigurations,
  getConfigurationByProjectName,
  getConfiguration,
  createConfiguration,
  createJob,
  listJobs,
  getJob,
  readJobLogs,
  getPlanChanges,
  cancelJob,
  listWorkers,
  registerSelfHostedWorker,
  getWorker,
};
