/**
 * A plan's change document (issue 29, "review a plan"): what the agent derives from the engine's
 * plan, sensitive values masked on the agent, as it uploads it and as people read it. The limits
 * are core's (`domain/planChanges.ts`).
 */
import {
  MAX_ATTRIBUTE_CHANGES,
  MAX_PLAN_CHANGE_OUTPUTS,
  MAX_PLAN_CHANGE_RESOURCES,
  MAX_PLAN_PATH_CHARS,
  MAX_PLAN_VALUE_CHARS,
  PLAN_CHANGES_FORMAT_VERSION,
  type PlanChanges,
  type PlanChangesView,
} from '@trellis/core';
import { z } from 'zod';
import { uuid } from './common.js';

const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const path = z.string().max(MAX_PLAN_PATH_CHARS);
const actions = z
  .array(z.string().max(32))
  .min(1)
  .max(4)
  .describe('the engine\'s actions, e.g. ["create"], ["update"], ["delete","create"], ["delete"]');

export const PlanValueSchema = z
  .union([
    z
      .object({
        value: z.union([
          z.string().max(MAX_PLAN_VALUE_CHARS),
          z.number(),
          z.boolean(),
          z.null(),
          z.array(z.never()).max(0),
          z.object({}).strict(),
        ]),
        truncated: z.literal(true).optional().describe(`a string cut at ${MAX_PLAN_VALUE_CHARS} characters`),
      })
      .strict(),
    z
      .object({ sensitive: z.literal(true) })
      .strict()
      .describe('marked sensitive: the value never left the agent'),
    z
      .object({ unknown: z.literal(true) })
      .strict()
      .describe('known after apply'),
  ])
  .describe('one side of a change: a leaf value (empty lists and objects are leaves), a mask, or unknown');

export const AttributeChangeSchema = z
  .object({
    path: path.describe('e.g. tags.Name, ingress[0].from_port, labels["app.kubernetes.io/name"]'),
    before: PlanValueSchema.optional().describe('absent: the attribute did not exist'),
    after: PlanValueSchema.optional().describe('absent: the attribute will not exist'),
    forces_replacement: z.literal(true).optional().describe('the engine replaces the resource because of it'),
  })
  .strict();

export const PlannedResourceChangeSchema = z
  .object({
    address: path,
    module_address: path.nullable().describe('e.g. module.net; null for the root module'),
    type: z.string().max(MAX_PLAN_PATH_CHARS),
    name: z.string().max(MAX_PLAN_PATH_CHARS),
    actions,
    action_reason: z.string().max(128).optional(),
    attributes: z.array(AttributeChangeSchema).max(MAX_ATTRIBUTE_CHANGES),
    attributes_omitted: count,
    unchanged_attributes: count.describe('attributes an update leaves as they are (not listed)'),
  })
  .strict();

export const PlannedOutputChangeSchema = z
  .object({
    name: z.string().max(MAX_PLAN_PATH_CHARS),
    actions,
    attributes: z.array(AttributeChangeSchema).max(MAX_ATTRIBUTE_CHANGES).describe("paths start at the output's name"),
    attributes_omitted: count,
  })
  .strict();

/** `PUT /api/jobs/{id}/plan-changes` (agent): the document as the agent derived it. */
export const PlanChangesSchema = z
  .object({
    format_version: z.literal(PLAN_CHANGES_FORMAT_VERSION),
    resource_changes: z.array(PlannedResourceChangeSchema).max(MAX_PLAN_CHANGE_RESOURCES),
    resource_changes_omitted: count,
    output_changes: z.array(PlannedOutputChangeSchema).max(MAX_PLAN_CHANGE_OUTPUTS),
    output_changes_omitted: count,
    truncated: z.boolean().describe('something was left out or cut: resources, outputs, attributes or long values'),
  })
  .strict() satisfies z.ZodType<PlanChanges>;

/** `GET /api/cli/jobs/{id}/plan/changes`: the document of a finished PLAN. */
export const PlanChangesResponse = PlanChangesSchema.extend({ job_id: uuid }) satisfies z.ZodType<PlanChangesView>;
