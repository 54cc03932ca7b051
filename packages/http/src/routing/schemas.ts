/**
 * Request and response shapes of the API. Requests are checked here for shape; the use cases
 * check the domain rules. Responses are documented, not enforced.
 */
import {
  GIT_PROVIDERS,
  IDENTITY_PROVIDERS,
  JOB_STATUSES,
  JOB_TYPES,
  REPORTABLE_JOB_STATUSES,
  STREAM_TYPES,
  VINE_STATUSES,
  WORKER_MODES,
  WORKER_STATUSES,
} from '@trellis/core';
import { z } from 'zod';

const uuid = z.uuid({ version: 'v4' }).or(z.uuid());
const isoTime = z.string().describe('ISO-8601 UTC time');
const jsonObject = z.record(z.string(), z.unknown());

export const IdParams = z.object({ id: z.uuid() });
export const NameParams = z.object({ name: z.string().min(1).max(200) });
export const ProjectNameParams = z.object({ project_name: z.string().min(1).max(200) });

// ---- auth
export const GenerateBody = z.object({ device_code: z.uuid() });
export const GenerateResponse = z.object({ verification_code: z.string(), expires_at: isoTime });
export const ExchangeBody = z.object({
  device_code: z.uuid(),
  verification_code: z.string().min(1).max(32),
});
export const ExchangeResponse = z.object({
  access_token: z.string(),
  refresh_token: z.string(),
  provider_token: z.string().nullable().describe('OAuth token of the sign-in provider, when there is one'),
  user_email: z.email(),
});
export const RefreshBody = z.object({ refresh_token: z.string().min(1).max(4096) });
export const TokenPairResponse = z.object({ access_token: z.string(), refresh_token: z.string() });
export const WhoAmIResponse = z.object({ id: uuid, email: z.string(), name: z.string() });

// ---- web sign-in and git providers
export const SignInParams = z.object({ provider: z.enum(IDENTITY_PROVIDERS) });
export const SignInQuery = z.object({
  next: z.string().optional().describe('same-origin path to land on after sign-in (default /)'),
});
const callbackParameter = z.string().max(4096).optional();
export const CallbackQuery = z.object({
  code: callbackParameter,
  state: callbackParameter,
  iss: callbackParameter.describe('RFC 9207 issuer identifier, checked when present'),
  error: callbackParameter.describe('set by the provider when the sign-in failed, e.g. access_denied'),
  error_description: callbackParameter,
});
export const ProvidersResponse = z.object({
  providers: z.array(
    z.object({
      id: z.enum(IDENTITY_PROVIDERS),
      name: z.string().describe('label for the sign-in button'),
      signin_url: z.string().describe('path of GET /auth/signin/{provider}; add ?next=<path>'),
    }),
  ),
});
export const GitProviderParams = z.object({ provider: z.enum(GIT_PROVIDERS) });
export const Repository = z.object({
  full_name: z.string(),
  name: z.string(),
  owner: z.string(),
  private: z.boolean(),
  default_branch: z.string().nullable(),
  clone_url: z.string().describe('https, without credentials'),
  html_url: z.string(),
  updated_at: isoTime.nullable(),
});

// ---- records
export const Variables = z.record(z.string(), z.object({ value: z.string(), sensitive: z.boolean() }));
export const Source = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('git'),
    url: z.string(),
    ref: z.string().nullable().optional(),
    path: z.string().nullable().optional(),
  }),
  z.object({ type: z.literal('inline'), files: z.record(z.string(), z.string()) }),
]);
export const Engine = z.object({ name: z.enum(['tofu', 'terraform']), version: z.string().nullable() });
export const CloudIdentity = z.object({
  id: uuid,
  owner_id: uuid,
  provider: z.literal('aws'),
  role_arn: z.string(),
  external_id: uuid,
});
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
  created_at: isoTime,
  updated_at: isoTime,
});
export const Components = z.object({
  cluster: z.object({ name: z.string().nullable(), endpoint: z.string().nullable(), job_id: uuid }).nullable(),
  argocd: z.object({ url: z.string(), job_id: uuid }).nullable(),
  outputs: z.object({ values: jsonObject, job_id: uuid }).nullable(),
});
export const VineDetail = Vine.extend({ cloud_identity: CloudIdentity.nullable(), components: Components });
export const Vineyard = z.object({
  id: uuid,
  owner_id: uuid,
  name: z.string(),
  created_at: isoTime,
  vines: z.array(Vine),
});
export const Job = z.object({
  id: uuid,
  owner_id: uuid,
  job_type: z.enum(JOB_TYPES),
  status: z.enum(JOB_STATUSES),
  config_snapshot: jsonObject,
  config_hash: z.string(),
  vine_id: uuid.nullable(),
  vineyard_id: uuid.nullable(),
  cloud_identity_id: uuid.nullable(),
  assigned_worker_id: uuid.nullable(),
  claimed_by_worker_id: uuid.nullable(),
  plan_job_id: uuid.nullable(),
  target_worker_id: uuid.nullable(),
  execution_metadata: jsonObject,
  error_message: z.string().nullable(),
  created_at: isoTime,
  claimed_at: isoTime.nullable(),
  finished_at: isoTime.nullable(),
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
  log_chunk: z.string(),
  stream_type: z.enum(STREAM_TYPES),
  created_at: isoTime,
});
export const LogPage = z.object({ logs: z.array(LogEntry), has_more: z.boolean() });
export const Release = z.object({ version: z.string(), release_notes: z.string(), published_at: isoTime });

// ---- CLI requests
export const CreateVineyardBody = z.object({ name: z.string() });
export const CreateConfigurationBody = z.object({
  name: z.string(),
  vineyard_id: z.string(),
  project_name: z.string().optional(),
  source: z.object({ type: z.enum(['git', 'inline']) }).passthrough(),
  variables: z
    .record(z.string(), z.union([z.string(), z.object({ value: z.string(), sensitive: z.boolean().optional() })]))
    .optional(),
  engine: z.union([z.enum(['tofu', 'terraform']), Engine.partial({ version: true })]).optional(),
  cloud_identity_id: z.string().optional(),
  cloud_identity: z
    .object({ provider: z.literal('aws').optional(), role_arn: z.string(), external_id: z.string().optional() })
    .optional(),
});
export const CreateJobBody = z.object({
  job_type: z.enum(JOB_TYPES),
  configuration_id: z.uuid().optional(),
  assigned_worker_id: z.uuid().optional(),
  plan_job_id: z.uuid().optional(),
  target_worker_id: z.uuid().optional(),
});
export const ListJobsQuery = z.object({
  status: z.enum(JOB_STATUSES).optional(),
  vineyard_id: z.uuid().optional(),
});
export const RegisterWorkerBody = z.object({ name: z.string(), mode: z.enum(WORKER_MODES).optional() });
export const RegistrationResponse = z.object({
  worker_id: uuid,
  worker_token: z.string().describe('shown only once; store it safely'),
});

// ---- agent requests
export const ClaimQuery = z.object({
  wait: z.coerce.number().int().min(0).max(30).optional().describe('long-poll for up to this many seconds'),
});
export const ClaimResponse = z.object({
  job: Job,
  cloud_identity: z.object({ provider: z.string(), role_arn: z.string(), external_id: uuid }).nullable(),
});
export const HeartbeatBody = z.object({ version: z.string() });
export const HeartbeatResponse = z.object({
  cancel_job_ids: z.array(uuid),
  heartbeat_interval_s: z.number().int(),
});
export const StatusBody = z.object({
  status: z.enum(REPORTABLE_JOB_STATUSES).or(z.literal('QUEUED')),
  execution_metadata: jsonObject.optional(),
  error_message: z.string().optional(),
});
export const LogBody = z.object({ log_chunk: z.string(), stream_type: z.enum(STREAM_TYPES) });
export const LogPostResponse = z.object({ id: z.number().int(), job_status: z.enum(JOB_STATUSES) });
export const LogQuery = z.object({
  after: z.coerce.number().int().min(0).optional(),
  limit: z.coerce.number().int().min(1).max(5000).optional(),
});
export const ArtifactResponse = z.object({ job_id: uuid, size: z.number().int(), sha256: z.string() });
export const MetadataBody = jsonObject;

// ---- release endpoints
export const PublishReleaseBody = z.object({ version: z.string(), release_notes: z.string() });
export const TendrilBody = z.object({ name: z.string(), owner_id: z.uuid(), metadata: jsonObject.optional() });
