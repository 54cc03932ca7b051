/** Changing and deleting configurations and vineyards (issue 25). */
import { ENGINE_NAMES, EXECUTION_MODES } from '@trellis/core';
import { z } from 'zod';
import { isoTime, recordName, uuid } from './common.js';
import { CreateConfigurationBody, TagsInput, UpdateConfigurationBody } from './cli.js';
import { Engine } from './records.js';

const VariableValue = z.union([z.string(), z.object({ value: z.string(), sensitive: z.boolean().optional() })]);

/** `PATCH /api/cli/configurations/{name}`: the settings of `UpdateConfigurationBody`, and the vine itself. */
export const EditConfigurationBody = UpdateConfigurationBody.extend({
  name: recordName.optional().describe('a new name (409 `vine_name_taken` if you have one by that name)'),
  project_name: recordName.optional().describe('a new project name (409 `project_name_taken`)'),
  source: CreateConfigurationBody.shape.source
    .optional()
    .describe('replaces the source: git (url, ref?, path?) or inline (files: path → content, all of them)'),
  variables: z
    .record(z.string(), VariableValue.nullable())
    .optional()
    .describe(
      'changes these variables only: a value sets one (given without `sensitive`, a variable keeps its sensitivity), null unsets one (400 if it is not set). Sensitive values are write-only',
    ),
  engine: z.union([z.enum(ENGINE_NAMES), Engine.partial({ version: true })]).optional(),
  cloud_identity_id: z.string().nullable().optional().describe('an identity of the owner; null: none'),
  cloud_identity: CreateConfigurationBody.shape.cloud_identity
    .unwrap()
    .nullable()
    .optional()
    .describe('a new identity, as at creation; null: none'),
  tags: TagsInput.optional().describe(
    'replaces all of its tags, under the rule of creation ([] removes them); does not make plans stale',
  ),
  execution_mode: z
    .enum(EXECUTION_MODES, {
      error: (issue) =>
        `must be ${EXECUTION_MODES.join(' or ')}, not ${JSON.stringify(issue.input) ?? String(issue.input)}`,
    })
    .optional()
    .describe(
      "where the stock CLI's `tofu plan`/`tofu apply` run: `remote` on the agents, `local` on the CLI's machine (the state stays here). It does not make plans stale",
    ),
});

export const DeleteConfigurationQuery = z.object({
  force: z
    .enum(['true', 'false'])
    .optional()
    .describe(
      'delete even though the configuration manages resources (they stay in the cloud, unmanaged); in an organization: admins and owners',
    ),
});

export const DeletedConfiguration = z.object({
  id: uuid,
  name: z.string(),
  state_kept_until: isoTime
    .nullable()
    .describe('its state versions are purged after this (the retention setting); null: kept'),
});

export const UpdateVineyardBody = z.object({ name: recordName });
