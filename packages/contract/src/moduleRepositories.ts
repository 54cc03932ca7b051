/** Modules published from git tags (issue 28): `/api/registry/module-repositories/…`. */
import { GIT_PROVIDERS, MODULE_TAG_OUTCOMES, WEBHOOK_MODES } from '@trellis/core';
import { z } from 'zod';
import { isoTime, uuid } from './common.js';

export const ConnectModuleRepositoryBody = z.object({
  provider: z.enum(GIT_PROVIDERS).describe('the git provider the repository is on'),
  repository: z.string().describe('`owner/name` (GitLab: `group/subgroup/project`)'),
  webhook: z
    .enum(WEBHOOK_MODES)
    .optional()
    .describe(
      '`auto` (default): Trellis creates the hook with your sign-in at the provider; `manual`: the answer carries the secret once, to paste at the provider with `webhook_url`',
    ),
});

export const ModuleTagResultRecord = z.object({
  tag: z.string(),
  commit_sha: z.string(),
  outcome: z.enum(MODULE_TAG_OUTCOMES),
  version: z.string().nullable().describe('the version the tag names (`v1.2.0` → `1.2.0`); null for another tag'),
  message: z.string().nullable().describe('why it was ignored or failed (`<problem code>: <sentence>`)'),
  at: isoTime,
});

export const ModuleRepositoryRecord = z.object({
  id: uuid,
  namespace: z.string(),
  name: z.string(),
  system: z.string(),
  provider: z.enum(GIT_PROVIDERS),
  repository: z.string(),
  webhook_mode: z.enum(WEBHOOK_MODES),
  webhook_url: z.string().describe('where the provider delivers: `/api/webhooks/{provider}?module={id}`'),
  hook_id: z.string().nullable(),
  connected_by: uuid,
  status: z
    .enum(['connected', 'needs_reconnect'])
    .describe('`needs_reconnect` once the person who connected it is no longer an admin: their token is not used'),
  last_tag: ModuleTagResultRecord.nullable().describe('what the newest tag push did; null before the first'),
  created_at: isoTime,
  updated_at: isoTime,
  webhook_secret: z.string().optional().describe('only in the answer of a `manual` connect: never shown again'),
});

export const ModuleRepositoryList = z.object({ repositories: z.array(ModuleRepositoryRecord) });
