/** The module registry (issue 28): `/api/registry/modules/…`. */
import { MAX_DEPRECATION_REASON, type ModuleUsage } from '@trellis/core';
import { z } from 'zod';
import { isoTime, PageQuery, uuid } from './common.js';

const namespace = z
  .string()
  .describe('the registry namespace: an organization you belong to (by name), or your personal namespace (`u-…`)');
const moduleName = z.string().describe('the module name, e.g. `vpc` (letters, digits, `-`, `_`; case-insensitive)');
const moduleSystem = z.string().describe("the module's target system (its main provider), e.g. `aws`");
const moduleVersion = z.string().describe('a semantic version, e.g. `1.2.0` (no `v`, no build metadata)');

export const ModuleParams = z.object({ namespace, name: moduleName, system: moduleSystem });
export const ModuleVersionParams = ModuleParams.extend({ version: moduleVersion });

export const ListModulesQuery = PageQuery.extend({ namespace });

export const DeprecateModuleVersionBody = z.object({
  deprecated: z.boolean().optional().describe('`false` undoes a deprecation; default `true`'),
  reason: z
    .string()
    .max(MAX_DEPRECATION_REASON)
    .nullable()
    .optional()
    .describe('why, and what to use instead (shown with the version)'),
});

export const RegistryModuleRecord = z.object({
  id: uuid,
  namespace: z.string(),
  name: z.string(),
  system: z.string(),
  latest_version: z.string().nullable().describe('the highest release (else pre-release) published; null when none'),
  created_at: isoTime,
  updated_at: isoTime,
});

export const RegistryModuleVersionRecord = z.object({
  id: uuid,
  namespace: z.string(),
  name: z.string(),
  system: z.string(),
  version: z.string(),
  size: z.number().int().describe('bytes of the tarball'),
  sha256: z.string().describe('lowercase hex SHA-256 of the tarball'),
  deprecated: z.boolean(),
  deprecated_at: isoTime.nullable(),
  deprecation_reason: z.string().nullable(),
  published_by: uuid.nullable(),
  published_at: isoTime,
});

export const RegistryModuleList = z.object({ modules: z.array(RegistryModuleRecord) });

export const RegistryModuleVersions = z.object({
  module: RegistryModuleRecord,
  versions: z.array(RegistryModuleVersionRecord).describe('highest first'),
});

export const ModuleUsageRecord = z.object({
  namespace: z.string(),
  name: z.string(),
  system: z.string(),
  vines: z
    .array(
      z.object({
        vine_id: uuid,
        vine_name: z.string(),
        version: z.string().describe('the version its last plan or deploy installed'),
        job_id: uuid.describe("the vine's newest succeeded PLAN or DEPLOY (a pull request's plan passed over)"),
        job_type: z.enum(['PLAN', 'DEPLOY']),
        finished_at: isoTime.nullable(),
      }),
    )
    .describe('by vine name, then version highest first; a vine whose plan installed two versions is listed twice'),
}) satisfies z.ZodType<ModuleUsage>;
