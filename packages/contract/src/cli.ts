/** What the CLI (and the web) sends: vineyards, configurations, jobs, workers (SPEC §4.3). */
import {
  CLOUD_PROVIDERS,
  ENGINE_NAMES,
  FLEET_DRIFT,
  JOB_STATUSES,
  JOB_TYPES,
  MAX_TAGS,
  MAX_LOG_PAGE,
  PLAN_POLICY_RESULTS,
  VINE_STATUSES,
  WORKER_MODES,
} from '@trellis/core';
import { z } from 'zod';
import { recordName } from './common.js';
import { OrgFilterQuery } from './orgs.js';
import { Engine, FleetCounts, FleetVineSummary, JobSummary, RunOptions, VineyardSummary, Worker } from './records.js';

export const CreateVineyardBody = z.object({
  name: recordName,
  org_id: z.uuid().optional().describe("create it in this organization (admins); absent: the caller's own"),
});
/**
 * A configuration's source as a caller writes it (`ref` and `path` may be left out). The body
 * below passes it to core as is, which judges it and reports every bad field at once.
 */
export const SourceInput = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('git'),
    url: z.string(),
    ref: z.string().nullable().optional(),
    path: z.string().nullable().optional(),
  }),
  z.object({ type: z.literal('inline'), files: z.record(z.string(), z.string()) }),
]);
/** A configuration's tags as a caller writes them; core judges each one (`domain/tags.ts`). */
export const TagsInput = z.array(z.string()).max(MAX_TAGS);
export const ApprovalSettingInput = z
  .object({ required: z.boolean(), separate_approver: z.boolean().optional() })
  .nullable()
  .describe(
    'DEPLOY only an approved plan (409 approval_required otherwise); separate_approver: the person who queued the plan cannot approve it. null or required false: no approval',
  );
export const CreateConfigurationBody = z.object({
  name: recordName,
  vineyard_id: z.string(),
  project_name: recordName.optional(),
  source: z
    .object({ type: z.enum(['git', 'inline']) })
    .passthrough()
    .describe('git: url, ref?, path?; inline: files (path → content); see SourceInput'),
  variables: z
    .record(z.string(), z.union([z.string(), z.object({ value: z.string(), sensitive: z.boolean().optional() })]))
    .optional(),
  engine: z.union([z.enum(ENGINE_NAMES), Engine.partial({ version: true })]).optional(),
  cloud_identity_id: z.string().optional(),
  cloud_identity: z
    .object({
      kind: z.enum(['assume_role', 'oidc']).optional().describe('default assume_role'),
      provider: z.enum(CLOUD_PROVIDERS).optional().describe('default aws'),
      role_arn: z.string().optional().describe('AWS (both kinds)'),
      external_id: z.string().optional().describe('assume_role; generated when absent'),
      audience: z.string().optional().describe('oidc: the aud of job tokens (default per cloud)'),
      session_duration: z.number().int().optional().describe('oidc, AWS: seconds (900 to 43200)'),
      workload_identity_provider: z.string().optional().describe('oidc, Google Cloud'),
      service_account_email: z.string().optional().describe('oidc, Google Cloud'),
      tenant_id: z.string().optional().describe('oidc, Azure'),
      client_id: z.string().optional().describe('oidc, Azure'),
    })
    .optional(),
  approval: ApprovalSettingInput.optional(),
  tags: TagsInput.optional().describe(
    "tags for the fleet's `tag` filter: letters, digits, ':', '_', '.' and '-' (at most 255 each, 100 in all), kept lower case, sorted and unique; the same tags the Terraform Cloud API's workspaces carry",
  ),
  triggers: z
    .object({ after: z.array(z.string()).max(50) })
    .optional()
    .describe(
      'queue a PLAN of this configuration when a DEPLOY of any of these configuration ids succeeds (the same owner); as the PATCH setting',
    ),
});
export const UpdateConfigurationBody = z.object({
  approval: ApprovalSettingInput.optional().describe('absent: unchanged; see ApprovalSettingInput'),
  drift_detection: z
    .object({
      interval_minutes: z
        .number()
        .int({ error: 'must be a whole number of minutes' })
        .min(60, { error: 'must be at least 60 minutes' })
        .max(10080, { error: 'must be at most 10080 minutes (a week)' }),
    })
    .nullable()
    .optional()
    .describe('check drift every interval_minutes (60 to 10080); null: stop; absent: unchanged'),
  triggers: z
    .object({ after: z.array(z.uuid()).max(50) })
    .optional()
    .describe(
      'queue a PLAN of this configuration when a DEPLOY of any of these succeeds (same owner; 409 trigger_cycle)',
    ),
});
const reviewText = z.string().max(2000);
export const ApprovePlanBody = z.object({ comment: reviewText.optional().describe('why, for the record') });
export const RejectPlanBody = z.object({ comment: reviewText.min(1).describe('why the plan is rejected') });
export const OverridePlanBody = z.object({
  reason: reviewText.min(1).describe('why the failed policies may be ignored'),
});
export const CreateJobBody = z.object({
  job_type: z.enum(JOB_TYPES),
  configuration_id: z.uuid().optional(),
  assigned_worker_id: z.uuid().optional(),
  plan_job_id: z
    .uuid()
    .optional()
    .describe('the plan a DEPLOY applies, or the destroy plan a DESTROY applies (the deploy gate may require one)'),
  target_worker_id: z.uuid().optional(),
  destroy: z.boolean().optional().describe('a PLAN of the destruction (a destroy plan), which a DESTROY then applies'),
  run_options: RunOptions.optional().describe(
    "a PLAN's engine options (`-target`, `-replace`, `-refresh-only`, `-refresh=false`); a DEPLOY of that plan applies it as planned. at most 100 addresses each, each one non-empty line",
  ),
});
export const ListJobsQuery = OrgFilterQuery.extend({
  status: z.enum(JOB_STATUSES).optional(),
  vineyard_id: z.uuid().optional(),
  vine_id: z.uuid().optional(),
});
/** The configurations list's filters (the fleet, issue 29); an empty value is no filter. */
export const ListConfigurationsQuery = OrgFilterQuery.extend({
  status: z
    .enum([...VINE_STATUSES, ''])
    .optional()
    .describe("the configuration's status"),
  drift: z
    .enum([...FLEET_DRIFT, ''])
    .optional()
    .describe("its last drift check's result, or never_checked"),
  policy: z
    .enum([...PLAN_POLICY_RESULTS, ''])
    .optional()
    .describe('the policies of its latest deployable plan: passed, failed, or none (no policy, or no plan)'),
  tag: z.string().max(255).optional().describe('configurations carrying this tag'),
  changed_since: z
    .string()
    .optional()
    .describe(
      'last changed (updated_at) at or after: a date (YYYY-MM-DD, from its first instant, UTC) or an ISO-8601 time',
    ),
  changed_before: z
    .string()
    .optional()
    .describe('last changed strictly before: a date (YYYY-MM-DD) or an ISO-8601 time'),
  counts: z
    .enum(['true', 'false'])
    .optional()
    .describe('true: the answer also has `counts`, by status, drift and policy over every page of the filter'),
});
export const RegisterWorkerBody = z.object({
  name: recordName,
  mode: z.enum(WORKER_MODES).optional(),
  org_id: z.uuid().optional().describe("an agent of this organization's pool (admins); absent: the caller's own"),
});
export const LogQuery = z.object({
  after: z.coerce.number().int().min(0).optional(),
  limit: z.coerce.number().int().min(1).max(MAX_LOG_PAGE).optional(),
});

// ---- the lists (paged: see the `Link` header)
export const VineyardList = z.object({ vineyards: z.array(VineyardSummary) });
export const ConfigurationList = z.object({
  configurations: z.array(FleetVineSummary),
  counts: FleetCounts.optional().describe('only with counts=true'),
});
export const JobList = z.object({ jobs: z.array(JobSummary) });
export const WorkerList = z.object({ workers: z.array(Worker) });
