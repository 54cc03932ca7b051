/** Enumerations of SPEC §2 and DESIGN §2/§3, as data so validators and tests can iterate them. */

export const JOB_TYPES = ['PLAN', 'DEPLOY', 'DESTROY', 'DESTROY_WORKER'] as const;
export type JobType = (typeof JOB_TYPES)[number];

export const JOB_STATUSES = ['QUEUED', 'PROCESSING', 'SUCCESS', 'FAILED', 'CANCELLED'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** Targets an agent may report with `PUT /api/jobs/{id}/status`; `QUEUED` is never one. */
export const REPORTABLE_JOB_STATUSES = ['PROCESSING', 'SUCCESS', 'FAILED', 'CANCELLED'] as const;
export type ReportableJobStatus = (typeof REPORTABLE_JOB_STATUSES)[number];

export const TERMINAL_JOB_STATUSES: readonly JobStatus[] = ['SUCCESS', 'FAILED', 'CANCELLED'];

export const STREAM_TYPES = ['STDOUT', 'STDERR', 'SYSTEM'] as const;
export type StreamType = (typeof STREAM_TYPES)[number];

export const WORKER_STATUSES = ['ONLINE', 'BUSY', 'OFFLINE', 'DESTROYED'] as const;
export type WorkerStatus = (typeof WORKER_STATUSES)[number];

export const WORKER_MODES = ['self-hosted', 'cloud'] as const;
export type WorkerMode = (typeof WORKER_MODES)[number];

export const VINE_STATUSES = [
  'NEW',
  'PLANNING',
  'PLANNED',
  'DEPLOYING',
  'DEPLOYED',
  'DESTROYING',
  'DESTROYED',
  'FAILED',
] as const;
export type VineStatus = (typeof VINE_STATUSES)[number];

/**
 * Where a workspace's plans and applies run (issue 26): `remote` on the organization's agents
 * (what every vine made in Trellis is), `local` on the machine of the person running the CLI,
 * whose state lives in Trellis. TFE's `agent` mode is read as `remote`.
 */
export const EXECUTION_MODES = ['remote', 'local'] as const;
export type ExecutionMode = (typeof EXECUTION_MODES)[number];

export const IDENTITY_PROVIDERS = ['github', 'gitlab', 'bitbucket', 'google'] as const;
export type IdentityProvider = (typeof IDENTITY_PROVIDERS)[number];

/** The sign-in providers that are also git hosts: their repositories can be listed (SPEC §4.3). */
export const GIT_PROVIDERS = ['github', 'gitlab', 'bitbucket'] as const satisfies readonly IdentityProvider[];
export type GitProvider = (typeof GIT_PROVIDERS)[number];

/** How each provider is named to people. */
export const PROVIDER_NAMES: Record<IdentityProvider, string> = {
  github: 'GitHub',
  gitlab: 'GitLab',
  bitbucket: 'Bitbucket',
  google: 'Google',
};

export const CLOUD_PROVIDERS = ['aws', 'gcp', 'azure'] as const;
export const CLOUD_IDENTITY_KINDS = ['assume_role', 'oidc'] as const;
export type CloudProvider = (typeof CLOUD_PROVIDERS)[number];

export const ENGINE_NAMES = ['tofu', 'terraform'] as const;
export type EngineName = (typeof ENGINE_NAMES)[number];

export function isOneOf<T extends string>(values: readonly T[], value: unknown): value is T {
  return typeof value === 'string' && (values as readonly string[]).includes(value);
}
