/** The records the API answers with: vineyards, vines (configurations), jobs, workers, logs. */
import {
  ENGINE_NAMES,
  EXECUTION_MODES,
  GIT_PROVIDERS,
  JOB_STATUSES,
  JOB_TYPES,
  PUSH_ANCESTRIES,
  STREAM_TYPES,
  VINE_STATUSES,
  FLEET_DRIFT,
  PLAN_POLICY_RESULTS,
  WORKER_MODES,
  WORKER_STATUSES,
} from '@trellis/core';
import { z } from 'zod';
import { isoTime, jsonObject, uuid } from './common.js';
import { ExecutionMetadataSchema } from './jobResults.js';

export const Variables = z.record(
  z.string(),
  z.object({ value: z.string(), sensitive: z.boolean(), description: z.string().optional() }),
);
const GitSource = z.object({
  type: z.literal('git'),
  url: z.string(),
  ref: z.string().nullable(),
  path: z.string().nullable(),
  commit: z
    .string()
    .optional()
    .describe('the exact commit a git-driven job checks out (pinned in its snapshot); absent: the head of `ref`'),
});
export const Source = z.discriminatedUnion('type', [
  GitSource,
  z.object({ type: z.literal('inline'), files: z.record(z.string(), z.string()) }),
]);
/** A remote run's uploaded configuration (issue 27): only a job's snapshot has it, never a vine. */
const UploadedSource = z
  .object({
    type: z.literal('upload'),
    configuration_version_id: uuid.describe('the configuration version (`cv-<id>` in the Terraform Cloud protocol)'),
    path: z.string().nullable().describe("the workspace's working directory inside it; null: its root"),
  })
  .describe('a configuration the stock CLI uploaded; the agent runs exactly that tarball');
/** A job's source: the vine's, or an upload (a run of the stock CLI). */
export const SnapshotSource = z.discriminatedUnion('type', [
  GitSource,
  z.object({ type: z.literal('inline'), files: z.record(z.string(), z.string()) }),
  UploadedSource,
]);
const address = z
  .string()
  .min(1)
  .max(1024)
  .regex(/^[^\n\r]*$/, 'one line');
export const RunOptions = z
  .object({
    target: z.array(address).max(100).optional().describe('`-target=ADDR` for each: plan only these'),
    replace: z.array(address).max(100).optional().describe('`-replace=ADDR` for each: plan their replacement'),
    refresh_only: z.literal(true).optional().describe('`-refresh-only`: plan only to update the state'),
    refresh: z.literal(false).optional().describe('`-refresh=false`: plan without refreshing the state'),
  })
  .describe('how a PLAN asks the engine to plan (issue 27); its DEPLOY applies that plan');
export const Engine = z.object({ name: z.enum(ENGINE_NAMES), version: z.string().nullable() });
/** A cloud identity's settings (issue 16): an assumed AWS role, or OIDC federation with one cloud. */
export const CloudIdentitySettings = z.union([
  z
    .object({ kind: z.literal('assume_role'), provider: z.literal('aws'), role_arn: z.string(), external_id: uuid })
    .describe('the agent assumes the role with the external id, using AWS credentials of its host'),
  z
    .object({
      kind: z.literal('oidc'),
      provider: z.literal('aws'),
      role_arn: z.string(),
      audience: z.string().nullable().describe('null: sts.amazonaws.com'),
      session_duration: z.number().int().nullable().describe('seconds of the STS session; null: the default'),
    })
    .describe('AWS: AssumeRoleWithWebIdentity with the job token'),
  z
    .object({
      kind: z.literal('oidc'),
      provider: z.literal('gcp'),
      workload_identity_provider: z
        .string()
        .describe('projects/<n>/locations/global/workloadIdentityPools/<pool>/providers/<provider>'),
      service_account_email: z.string().nullable().describe('impersonated after the exchange; null: direct access'),
      audience: z.string().nullable().describe('null: https://iam.googleapis.com/<workload_identity_provider>'),
    })
    .describe('Google Cloud: workload identity federation'),
  z
    .object({
      kind: z.literal('oidc'),
      provider: z.literal('azure'),
      tenant_id: z.string(),
      client_id: z.string(),
      audience: z.string().nullable().describe('null: api://AzureADTokenExchange'),
    })
    .describe('Azure: workload identity federation (federated credential of an app registration)'),
]);
export const CloudIdentity = z.intersection(z.object({ id: uuid, owner_id: uuid }), CloudIdentitySettings);
export const DriftResult = z
  .object({
    status: z.enum(['in_sync', 'drifted', 'unknown']),
    checked_at: isoTime,
    job_id: uuid,
    changes: z.object({ add: z.number().int(), change: z.number().int(), destroy: z.number().int() }).nullable(),
    error: z.string().optional().describe('why a check that failed is unknown'),
  })
  .describe("the vine's last drift check (null: never checked)");
export const JobTrigger = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('manual') }),
    z.object({ type: z.literal('cli') }).describe('a remote run of the stock tofu CLI (issue 27)'),
    z.object({ type: z.literal('drift') }),
    z.object({ type: z.literal('upstream'), vine_id: uuid, job_id: uuid }),
    z.object({
      type: z.literal('push'),
      provider: z.enum(GIT_PROVIDERS),
      repository: z.string(),
      branch: z.string(),
      commit_sha: z.string(),
      commit_message: z.string(),
      author: z.string(),
      ancestry: z
        .enum(PUSH_ANCESTRIES)
        .optional()
        .describe(
          'when the connection auto-deploys: whether the commit is newer than what the configuration deployed or planned from a push before (only `newer` is deployed by itself); absent: not checked',
        ),
    }),
    z.object({
      type: z.literal('pull_request'),
      provider: z.enum(GIT_PROVIDERS),
      repository: z.string(),
      number: z.number().int(),
      title: z.string(),
      url: z.string().describe("the pull request's page at the provider"),
      head_sha: z.string(),
      head_branch: z.string(),
      base_branch: z.string(),
      author: z.string(),
      fork: z.boolean().optional().describe('the head commit comes from a fork of the repository'),
      secrets_withheld: z
        .boolean()
        .optional()
        .describe(
          'planned without secrets (a fork, `fork_pull_requests: without_secrets`): no sensitive variables, cloud identity, identity token or clone credentials',
        ),
    }),
  ])
  .describe(
    'why the job was queued: by a person, by drift detection, by a successful DEPLOY of an upstream vine, by a push to the connected branch, or by a pull request into it',
  );
const DecisionBy = {
  user_id: uuid,
  email: z.string().nullable(),
  at: isoTime,
};
export const PlanApproval = z
  .object({ ...DecisionBy, decision: z.enum(['approved', 'rejected']), comment: z.string().nullable() })
  .describe("a PLAN's approval or rejection (null: undecided)");
export const PolicyOverride = z
  .object({ ...DecisionBy, reason: z.string() })
  .describe("an admin's override of the PLAN's failed mandatory policies (null: none)");
export const ApprovalSetting = z
  .object({ required: z.boolean(), separate_approver: z.boolean() })
  .describe(
    'a DEPLOY needs an approved plan; with separate_approver the person who queued the plan cannot approve it (null: no approval)',
  );
export const Vine = z.object({
  id: uuid,
  owner_id: uuid,
  vineyard_id: uuid,
  name: z.string(),
  project_name: z.string(),
  cloud_identity_id: uuid.nullable(),
  source: Source,
  variables: Variables.describe('sensitive values are shown as ***'),
  engine: Engine,
  status: z.enum(VINE_STATUSES),
  status_message: z.string().nullable(),
  drift_detection: z
    .object({ interval_minutes: z.number().int() })
    .nullable()
    .describe('how often drift is checked; null: never on a schedule'),
  next_drift_check_at: isoTime.nullable().describe('when the scheduler next queues a drift check'),
  drift: DriftResult.nullable(),
  triggers: z
    .object({ after: z.array(uuid) })
    .describe('a successful DEPLOY of any of these vines queues a PLAN of this one'),
  approval: ApprovalSetting.nullable(),
  tags: z.array(z.string()).describe("the workspace's tags (the Terraform Cloud protocol's `tags` strategy)"),
  terraform_version: z
    .string()
    .describe('the version string the stock CLI set on its workspace, else `latest` (docs/terraform-cloud.md)'),
  execution_mode: z
    .enum(EXECUTION_MODES)
    .describe('`remote`: runs on the agents; `local`: the stock CLI runs on its machine, the state lives here'),
  workspace_settings: z
    .object({
      description: z.string(),
      auto_apply: z.boolean(),
      auto_apply_run_trigger: z.boolean(),
      allow_destroy_plan: z.boolean(),
      assessments_enabled: z.boolean(),
      file_triggers_enabled: z.boolean(),
      queue_all_runs: z.boolean(),
      speculative_enabled: z.boolean(),
      structured_run_output_enabled: z.boolean(),
      global_remote_state: z.boolean(),
      working_directory: z.string(),
      trigger_prefixes: z.array(z.string()),
      trigger_patterns: z.array(z.string()),
      auto_destroy_at: isoTime.nullable(),
      source_name: z.string(),
      source_url: z.string(),
    })
    .describe(
      "the other settings of the vine's workspace, as the stock CLI and go-tfe set them (docs/terraform-cloud.md)",
    ),
  created_at: isoTime,
  updated_at: isoTime,
});
export const Components = z.object({
  cluster: z.object({ name: z.string().nullable(), endpoint: z.string().nullable(), job_id: uuid }).nullable(),
  argocd: z.object({ url: z.string(), job_id: uuid }).nullable(),
  outputs: z
    .object({
      values: jsonObject,
      sensitive: z
        .array(z.string())
        .optional()
        .describe('the names of the sensitive outputs, whose values are never stored'),
      job_id: uuid,
    })
    .nullable(),
});
export const VineDetail = Vine.extend({ cloud_identity: CloudIdentity.nullable(), components: Components });
export const Vineyard = z.object({
  id: uuid,
  owner_id: uuid,
  name: z.string(),
  created_at: isoTime,
  vines: z.array(Vine),
});
/** Lists carry summaries (issue 10 §2): no inline files, no variables. */
export const SourceSummary = z.discriminatedUnion('type', [
  GitSource,
  z
    .object({ type: z.literal('inline'), file_count: z.number().int() })
    .describe('how many files; the files themselves are in the detail'),
]);
export const VineSummary = Vine.omit({ source: true, variables: true }).extend({ source: SourceSummary });
export const VineyardSummary = Vineyard.extend({ vines: z.array(VineSummary) });
/** A vine in the configurations list (the fleet, issue 29). */
export const FleetVineSummary = VineSummary.extend({
  vineyard_name: z.string().nullable().describe("its vineyard's name"),
  policy: z
    .enum(PLAN_POLICY_RESULTS)
    .describe(
      'the policies of its latest deployable plan (drift checks and pull requests passed over): failed when any did not pass, none when it had none or there is no plan',
    ),
});
const countsOf = <T extends string>(values: readonly T[]) =>
  z.object(Object.fromEntries(values.map((value) => [value, z.number().int()])) as Record<T, z.ZodNumber>);
export const FleetCounts = z
  .object({
    total: z.number().int().describe('how many vines the filter lists, over every page'),
    status: countsOf(VINE_STATUSES),
    drift: countsOf(FLEET_DRIFT),
    policy: countsOf(PLAN_POLICY_RESULTS),
  })
  .describe(
    "how many vines stand each way; each dimension is counted under the other dimensions' filters, not its own, so each count is what choosing it would list",
  );
/** What a job runs, frozen when it was created (core's `ConfigSnapshot`). */
export const ConfigSnapshot = z.object({
  vine: z.object({ id: uuid, name: z.string(), project_name: z.string(), vineyard_id: uuid }).nullable(),
  source: SnapshotSource.nullable(),
  variables: Variables.describe('sensitive values are shown as ***'),
  engine: Engine.nullable(),
  cloud_identity_id: uuid.nullable(),
  target_worker: z
    .object({ id: uuid, name: z.string(), mode: z.enum(WORKER_MODES) })
    .optional()
    .describe('set for DESTROY_WORKER jobs'),
  destroy: z
    .literal(true)
    .optional()
    .describe("a destroy plan, or the DESTROY that applies one: its hash never equals a deploy plan's"),
  run_options: RunOptions.extend({
    variables: z
      .array(z.string())
      .optional()
      .describe(
        "the variables the run itself set (`-var`, `-var-file`): their values override the vine's for this run",
      ),
  }).optional(),
});
export const SnapshotSummary = ConfigSnapshot.omit({ source: true, variables: true }).extend({
  source: z.discriminatedUnion('type', [...SourceSummary.options, UploadedSource]).nullable(),
});
export const ClaimedPolicy = z.object({
  policy_id: uuid,
  version: z.number().int(),
  name: z.string(),
  enforcement: z.enum(['advisory', 'mandatory']),
});
const JobAction = z.object({
  allowed: z.boolean(),
  code: z.string().optional().describe('the problem code the API answers when not allowed'),
  reason: z.string().optional(),
});
export const PlanActions = z.object({
  apply: JobAction.describe('a DEPLOY of the plan (a DESTROY of a destroy plan)'),
  approve: JobAction,
  reject: JobAction,
  override: JobAction,
});
export const Job = z.object({
  id: uuid,
  owner_id: uuid,
  job_type: z.enum(JOB_TYPES),
  status: z.enum(JOB_STATUSES),
  config_snapshot: ConfigSnapshot,
  config_hash: z.string(),
  vine_id: uuid.nullable(),
  vineyard_id: uuid.nullable(),
  cloud_identity_id: uuid.nullable(),
  assigned_worker_id: uuid.nullable(),
  claimed_by_worker_id: uuid.nullable(),
  plan_job_id: uuid.nullable(),
  target_worker_id: uuid.nullable(),
  execution_metadata: ExecutionMetadataSchema,
  error_message: z.string().nullable(),
  created_at: isoTime,
  claimed_at: isoTime.nullable(),
  finished_at: isoTime.nullable(),
  vine_status_before: z.enum(VINE_STATUSES).nullable().describe("the vine's status before this job moved it"),
  trigger: JobTrigger,
  created_by: uuid.nullable().describe('the person who queued the job (null: the system)'),
  caused_by: uuid
    .nullable()
    .describe(
      'of a job the system queued, the person whose action caused it (the upstream deploy, the push); the creator for the separate-approver rule',
    ),
  claimed_policies: z
    .array(ClaimedPolicy)
    .nullable()
    .describe('the policy versions its claim carried to the agent (null: not claimed); each needs a result'),
  approval: PlanApproval.nullable(),
  policy_override: PolicyOverride.nullable(),
  speculative: z
    .boolean()
    .describe("a speculative plan (a drift check or a pull request's plan) is never deployed (409 plan_speculative)"),
  actions: PlanActions.nullable()
    .optional()
    .describe("a plan's, in the detail of one job: what the caller may do with it, by the deploy gate's rule"),
});
export const WaitingFor = z
  .object({
    reason: z
      .enum(['vine_busy', 'no_agent_online', 'agents_busy', 'approval', 'offered'])
      .describe(
        "`vine_busy`: another job of its configuration runs or was queued first (`job_id`); `no_agent_online`: no agent of the job's owner is online (an organization's jobs run only on its own agents); `agents_busy`: every online agent of the owner runs another job; `approval`: a plan that must be approved before it can be deployed; `offered`: a DEPLOY held a few seconds for the agent that ran its plan, which applies it without downloading it",
      ),
    message: z.string().describe('one sentence for people, saying what to do when there is something to do'),
    job_id: uuid.optional().describe('`vine_busy`: the job the configuration is busy with'),
  })
  .describe('why a job waits (issue 25)');
/** One job as `GET /api/cli/jobs/{id}` answers it: with why it waits. */
export const JobDetail = Job.extend({
  waiting_for: WaitingFor.nullable().describe('why the job waits; null when it does not'),
  queue_position: z
    .number()
    .int()
    .min(1)
    .nullable()
    .describe("of a queued job, its place in its owner's queue (GET /api/cli/queue); null otherwise"),
});
export const JobSummary = Job.omit({ actions: true }).extend({
  config_snapshot: SnapshotSummary.describe(
    'the snapshot without `source.files` and `variables`; GET /api/cli/jobs/{id} has all of it',
  ),
});
export const Worker = z.object({
  id: uuid,
  owner_id: uuid,
  name: z.string(),
  mode: z.enum(WORKER_MODES),
  status: z.enum(WORKER_STATUSES),
  last_heartbeat: isoTime.nullable(),
  version: z.string().nullable(),
  metadata: jsonObject,
  created_at: isoTime,
  destroyed_at: isoTime.nullable(),
});
export const LogEntry = z.object({
  id: z.number().int(),
  job_id: uuid,
  log_chunk: z.string(),
  stream_type: z.enum(STREAM_TYPES),
  created_at: isoTime,
});
export const LogPage = z.object({ logs: z.array(LogEntry), has_more: z.boolean() });
export const Release = z.object({ version: z.string(), release_notes: z.string(), published_at: isoTime });
export const RegistrationResponse = z.object({
  worker_id: uuid,
  worker_token: z.string().describe('shown only once; store it safely'),
});
