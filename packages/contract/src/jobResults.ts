/**
 * The agent's known results in a job's `execution_metadata` (issue 24), as core's
 * `parseExecutionMetadata` judges them when the agent reports them: one shape for the report,
 * the job's answer and every reader. Other fields of the metadata are the agent's own and kept.
 */
import {
  type JobResults,
  MAX_MODULE_SOURCE_LENGTH,
  MAX_MODULE_VERSION_LENGTH,
  MAX_REPORTED_METADATA_BYTES,
  MAX_REPORTED_MODULES,
  MAX_RESOURCE_CHANGES,
} from '@trellis/core';
import { z } from 'zod';
import { jsonObject, jsonValue } from './common.js';
import { PolicyResultRecord } from './policies.js';

const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const url = z.string().refine((value) => URL.canParse(value), { message: 'must be a URL' });

export const PlanSummarySchema = z
  .object({ add: count, change: count, destroy: count })
  .describe('how many resources the plan adds, changes and destroys (a replacement counts once each way)');

export const ResourceChangeSchema = z.object({
  address: z.string(),
  actions: z.array(z.string()).describe('the engine\'s actions, e.g. ["create"] or ["delete","create"]'),
});

export const ModuleUseSchema = z.object({
  source: z
    .string()
    .min(1)
    .max(MAX_MODULE_SOURCE_LENGTH)
    .describe('the registry address the engine installed it from, e.g. trellis.example.com/acme/vpc/aws'),
  version: z.string().min(1).max(MAX_MODULE_VERSION_LENGTH).describe('the version installed'),
});

export const JobResultsSchema = z.object({
  plan_summary: PlanSummarySchema.optional(),
  resource_changes: z
    .array(ResourceChangeSchema)
    .max(MAX_RESOURCE_CHANGES)
    .optional()
    .describe(`a PLAN's changed resources (no-op and read-only ones left out), at most ${MAX_RESOURCE_CHANGES}`),
  resource_changes_omitted: count.optional().describe('how many more changed resources there were'),
  policy_results: z.array(PolicyResultRecord).optional().describe("a PLAN's result of each policy it was given"),
  outputs: jsonObject
    .optional()
    .describe("a DEPLOY's outputs: plain values, or OpenTofu's {value, type, sensitive} (sensitive values redacted)"),
  sensitive_outputs: z.array(z.string()).optional().describe('the outputs left out because they are sensitive'),
  cluster_name: z.string().nullable().optional(),
  cluster_endpoint: url.nullable().optional(),
  argocd_url: url.nullable().optional(),
  modules: z
    .array(ModuleUseSchema)
    .max(MAX_REPORTED_MODULES)
    .optional()
    .describe(`the registry modules a PLAN's or DEPLOY's init installed, at most ${MAX_REPORTED_MODULES}`),
}) satisfies z.ZodType<JobResults>;

/**
 * `execution_metadata`: the known results in their shape (a malformed one is `400
 * validation_failed` naming the field), and any other field the agent reports, kept as it is.
 */
export const ExecutionMetadataSchema = JobResultsSchema.catchall(jsonValue).describe(
  `what the agent reported; one report at most ${MAX_REPORTED_METADATA_BYTES} bytes, merged into the job's (each field replaced whole)`,
);
