/** Repository connections (issue 13): `PUT/GET/DELETE /api/cli/configurations/{name}/vcs`. */
import {
  FORK_PULL_REQUEST_MODES,
  VCS_CONNECTION_STATUSES,
  GIT_PROVIDERS,
  MAX_VCS_PATH_LENGTH,
  MAX_VCS_PATHS,
  WEBHOOK_MODES,
} from '@trellis/core';
import { z } from 'zod';
import { isoTime, uuid } from './common.js';

export const ConnectVcsBody = z.object({
  provider: z.enum(GIT_PROVIDERS),
  repository: z
    .string()
    .min(3)
    .max(255)
    .describe('`owner/name` (GitLab: `group/subgroup/project`; Bitbucket: `workspace/slug`)'),
  branch: z
    .string()
    .min(1)
    .max(255)
    .describe('pushes to this branch plan the vine; pull requests into it plan it speculatively'),
  paths: z
    .array(z.string().min(1).max(MAX_VCS_PATH_LENGTH))
    .max(MAX_VCS_PATHS)
    .optional()
    .describe(
      'glob patterns of repository paths (`infra/**`); a push touching none of them is ignored. Absent or empty: every file',
    ),
  auto_deploy: z
    .boolean()
    .optional()
    .describe('a successful plan of a push is deployed without a person (default false)'),
  pull_requests: z.boolean().optional().describe('plan pull requests into the branch speculatively (default true)'),
  fork_pull_requests: z
    .enum(FORK_PULL_REQUEST_MODES)
    .optional()
    .describe(
      "pull requests from forks: `off` (default) plans none and leaves a neutral commit status; `without_secrets` plans them with no sensitive variables, cloud identity, identity token or clone credentials; `with_secrets` plans them like the repository's own. No pull request's plan writes or locks the state",
    ),
  webhook: z
    .enum(WEBHOOK_MODES)
    .optional()
    .describe(
      '`auto` (default): Trellis creates the webhook with your token (409 `vcs_permission_missing` when it may not); `manual`: you create it, with the URL and the secret of the answer',
    ),
  path: z
    .string()
    .max(1024)
    .nullable()
    .optional()
    .describe(
      "the working directory inside the repository; absent: the vine's current git path; null or empty: the root",
    ),
});

export const VcsConnectionRecord = z.object({
  vine_id: uuid,
  provider: z.enum(GIT_PROVIDERS),
  repository: z.string(),
  branch: z.string(),
  paths: z.array(z.string()),
  auto_deploy: z.boolean(),
  pull_requests: z.boolean(),
  fork_pull_requests: z.enum(FORK_PULL_REQUEST_MODES).describe('what pull requests from forks do'),
  webhook_mode: z.enum(WEBHOOK_MODES),
  webhook_url: z
    .string()
    .describe(
      "where the provider sends deliveries: `<web URL>/api/webhooks/<provider>?vine=<vine id>` (one hook URL per vine; a delivery is checked against this connection's secret only)",
    ),
  hook_id: z.string().nullable().describe("the provider's id of the hook Trellis created; null in manual mode"),
  connected_by: uuid.describe(
    'the person whose provider token creates hooks, reports statuses and comments, and fetches commits (never sent to agents)',
  ),
  status: z
    .enum(VCS_CONNECTION_STATUSES)
    .describe(
      '`needs_reconnect` when the person who connected it is no longer an admin of the owner: their token is not used, its jobs fail with `needs_reconnect`, no status or comment is posted, until an admin connects it again',
    ),
  created_at: isoTime,
  updated_at: isoTime,
});

export const ConnectVcsResponse = VcsConnectionRecord.extend({
  webhook_secret: z
    .string()
    .optional()
    .describe('manual mode only, and only in this answer: paste it as the webhook secret at the provider'),
});
