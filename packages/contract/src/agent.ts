/** The agent protocol (SPEC §4.2): claim, heartbeat, status, logs, plan artifacts. */
import {
  JOB_STATUSES,
  MAX_LOG_BATCH_BYTES,
  MAX_LOG_BATCH_CHUNKS,
  POLICY_ENFORCEMENTS,
  REPORTABLE_JOB_STATUSES,
  STATE_ACCESSES,
  STREAM_TYPES,
} from '@trellis/core';
import { z } from 'zod';
import { jsonObject, uuid } from './common.js';
import { ExecutionMetadataSchema } from './jobResults.js';
import { CloudIdentitySettings, Job } from './records.js';

export const ClaimQuery = z.object({
  wait: z.coerce.number().int().min(0).max(30).optional().describe('long-poll for up to this many seconds'),
});
/** A policy as the claim of a PLAN carries it (issue 15). */
export const PolicyToEvaluateSchema = z.object({
  id: uuid,
  version: z.number().int(),
  name: z.string(),
  enforcement: z.enum(POLICY_ENFORCEMENTS),
  module: z.string().describe('the Rego source of that version'),
});
/** A job as its agent reads it: the full snapshot; `speculative` is for people (the trigger says it). */
export const AgentJob = Job.omit({ speculative: true });
export const ClaimResponse = z.object({
  job: AgentJob,
  cloud_identity: CloudIdentitySettings.nullable().describe("the vine's cloud identity (null: none)"),
  identity_token: z
    .string()
    .nullable()
    .optional()
    .describe(
      "for a vine whose cloud identity is oidc: the job's OpenID Connect token, signed by this control plane (issuer: /.well-known/openid-configuration), valid for the job's limit; absent or null otherwise",
    ),
  state_token: z
    .string()
    .nullable()
    .describe(
      "for the engine's http state backend (Basic auth: worker id, this token) instead of the worker token; valid for this job's configuration while the job runs; null without a configuration",
    ),
  policies: z
    .array(PolicyToEvaluateSchema)
    .describe(
      "a PLAN's (and drift check's): the policies that apply to its configuration, at their current version; the agent evaluates each on the plan with OPA (empty: none apply)",
    ),
  vineyard: z
    .object({ id: uuid, name: z.string() })
    .nullable()
    .describe("the configuration's vineyard (`input.trellis.vineyard` of the policies); null without a configuration"),
  state_access: z
    .enum(STATE_ACCESSES)
    .optional()
    .describe(
      "how the state token opens the configuration's state: `write` (read, lock, write), or `read` for a speculative plan (a pull request's plan, a drift check), which the agent runs with `-lock=false` and whose writes and locks are refused (403 `state_read_only`); absent from older servers: `write`",
    ),
  source_credentials: z
    .object({ username: z.string(), password: z.string() })
    .nullable()
    .describe(
      "HTTPS credentials for cloning the git source of a configuration connected to a repository (issue 13): the connecting user's provider token, short-lived; the agent gives them to git through GIT_ASKPASS only, never in a URL, argument, log or the engine's environment. Null otherwise, or when the token could not be had (the clone then fails with git's message).",
    ),
});
export const HeartbeatBody = z.object({
  version: z.string(),
  running_job_ids: z
    .array(uuid)
    .max(256)
    .optional()
    .describe(
      "Sent with an agent's first heartbeat, when it starts: the jobs it runs (none after a restart). Every other job the control plane thinks this agent runs ended with its old process: it fails at once (`the agent running this job restarted`) and its configuration's state lock is released. Absent on the heartbeats that follow.",
    ),
});
export const HeartbeatResponse = z.object({
  cancel_job_ids: z.array(uuid),
  heartbeat_interval_s: z.number().int(),
});
export const StatusBody = z.object({
  status: z.enum(REPORTABLE_JOB_STATUSES).or(z.literal('QUEUED')),
  execution_metadata: ExecutionMetadataSchema.optional(),
  error_message: z.string().optional(),
});
export const LogChunkBody = z.object({ log_chunk: z.string(), stream_type: z.enum(STREAM_TYPES) });
export const LogBatchBody = z.object({
  chunks: z
    .array(
      LogChunkBody.extend({
        seq: z
          .number()
          .int()
          .min(1)
          .describe("the agent's sequence number of the chunk in the job, from 1; consecutive within a batch"),
      }),
    )
    .min(1)
    // The count is checked by the use case, whose error names the limit; a bound here would turn
    // an oversized batch into an unclear "invalid union" against the single-chunk form.
    .describe(
      `at most ${MAX_LOG_BATCH_CHUNKS} chunks and ${MAX_LOG_BATCH_BYTES} bytes of log_chunk in all; a chunk whose seq the log holds already is skipped, so a retried batch is stored once`,
    ),
});
/** One chunk (SPEC), or a batch of chunks with sequence numbers (issue 17). */
export const LogBody = z.union([LogBatchBody, LogChunkBody]);
export const LogPostResponse = z.object({ id: z.number().int(), job_status: z.enum(JOB_STATUSES) });
export const LogBatchResponse = z.object({
  last_seq: z.number().int().describe('the highest seq the job log holds: every seq up to it is stored'),
  stored: z.number().int().describe('chunks this request stored (0 for a repeated batch)'),
  job_status: z.enum(JOB_STATUSES),
});
export const ArtifactResponse = z.object({ job_id: uuid, size: z.number().int(), sha256: z.string() });
export const MetadataBody = jsonObject;

/** `GET /api/jobs/{id}/logs/stream` (Server-Sent Events). */
export const StreamQuery = z.object({
  after: z.coerce.number().int().min(0).optional().describe('resume after this chunk id (or send Last-Event-ID)'),
});
