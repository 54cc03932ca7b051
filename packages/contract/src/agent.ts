/** The agent protocol (SPEC §4.2): claim, heartbeat, status, logs, plan artifacts. */
import {
  AGENT_FEATURES,
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
  features: z
    .string()
    .max(256)
    .optional()
    .describe(
      `what this agent can run, comma-separated (${AGENT_FEATURES.join(', ')}): a job needing a feature the agent does not name fails at once (\`agent_outdated\`) instead of running as something else; absent: none (an older agent)`,
    ),
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
  configuration_version: z
    .object({
      id: uuid,
      sha256: z.string().describe('lowercase hex SHA-256 of the tarball; the agent refuses other bytes'),
      size: z.number().int(),
      url: z
        .string()
        .describe("path on this control plane to download the tarball from, with the agent's own credentials"),
      strip_components: z
        .number()
        .int()
        .describe("leading directories to strip when unpacking (1 for a provider's archive, 0 for an upload)"),
    })
    .nullable()
    .optional()
    .describe(
      "for a job of a configuration connected to a repository: the configuration version (an immutable .tar.gz) of its commit, fetched by the control plane; for a job whose source is an upload (a run of the stock CLI): the version uploaded. The agent downloads it, checks its sha256, unpacks it and runs exactly it (an upload in its source's `path`). No agent ever receives a person's provider token (issue 23). Absent or null otherwise.",
    ),
  registry: z
    .object({
      token: z
        .string()
        .describe(
          "the job's registry token (`trr_…`): a bearer token for reads of the owner's private registry and provider mirror, valid while the job runs; the agent writes it into the engine's CLI configuration as this control plane's credentials",
        ),
      namespace: z.string().describe("the owner's registry namespace (an organization's name, or a person's `u-…`)"),
      mirror_providers: z
        .array(z.string())
        .describe(
          "the providers (`hostname/namespace/type`) the owner's provider mirror holds, and `hostname/*/*` for each hostname it pulls through from (`TRELLIS_MIRROR_UPSTREAM`), which the agent installs from `/api/registry/mirror/<namespace>/`; empty: the owner has no mirror",
        ),
    })
    .optional()
    .describe("the registry of the job's owner (issue 28); absent from older servers"),
});
export const HeartbeatBody = z.object({
  version: z.string(),
  running_job_ids: z
    .array(uuid)
    .max(256)
    .optional()
    .describe(
      "Sent with an agent's first heartbeat, when it starts: the jobs it runs (none after a restart). Every other job the control plane thinks this agent runs ended with its old process: it fails at once (`the agent running this job restarted`) and its configuration's state lock is released. Absent on the heartbeats that follow, but for `after_unanswered_claim`.",
    ),
  after_unanswered_claim: z
    .boolean()
    .optional()
    .describe(
      'With `running_job_ids`: the agent sends the list because a claim of it failed on the way (its answer may have been lost), not because it started. A job the control plane gave it that it does not list never reached it (no engine started): it goes back in the queue at once (audited `job.requeue`) and runs on the next claim.',
    ),
});
export const HeartbeatResponse = z.object({
  cancel_job_ids: z.array(uuid),
  heartbeat_interval_s: z.number().int(),
  lost_job_timeout_s: z
    .number()
    .int()
    .optional()
    .describe(
      "the lost-job timeout (`TRELLIS_LOST_JOB_TIMEOUT_S`): the control plane fails the running jobs of an agent whose heartbeats it has not had for this long. The agent's lease: one that has had no answer to its heartbeats for two thirds of it fences itself (claims nothing, starts no engine phase) until one is answered. Absent from older servers",
    ),
});
/** Issue 31: a final report may carry the agent's next claim, so a freed slot needs no claim of its own. */
export const StatusQuery = z.object({
  claim_next: z
    .string()
    .max(256)
    .optional()
    .describe(
      "present: when this report ends the job, claim this agent's next job in the same request, with these features (comma-separated, as `features` of a claim; empty: none); the answer's `next_claim` is it, or null. Only from an agent whose slot the job frees, which runs what it gets as if it had claimed it",
    ),
});
export const StatusBody = z.object({
  status: z.enum(REPORTABLE_JOB_STATUSES).or(z.literal('QUEUED')),
  execution_metadata: ExecutionMetadataSchema.optional(),
  error_message: z.string().optional(),
});
/** The answer to a status report: the job, and with `claim_next` the next claim (or null). */
export const StatusResponse = AgentJob.extend({
  next_claim: ClaimResponse.nullable()
    .optional()
    .describe(
      'with `claim_next`, when the report ended the job: the job this agent claimed next, as `POST /api/jobs/claim` answers it, or null when there is none (or it could not be claimed: claim as usual). Absent otherwise, and from older servers',
    ),
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
/** `GET /api/jobs/{id}/configuration-versions/{version}`. */
export const ConfigurationVersionParams = z.object({ id: uuid, version: uuid });
export const ArtifactResponse = z.object({ job_id: uuid, size: z.number().int(), sha256: z.string() });
export const MetadataBody = jsonObject;

/** `GET /api/jobs/{id}/logs/stream` (Server-Sent Events). */
export const StreamQuery = z.object({
  after: z.coerce.number().int().min(0).optional().describe('resume after this chunk id (or send Last-Event-ID)'),
});
