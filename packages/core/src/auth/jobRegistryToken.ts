import type { RequestContext } from '../domain/audit.js';
import { UnauthorizedError } from '../domain/errors.js';
import { isUuid } from '../domain/validation.js';
import type { SecretBox } from '../ports/SecretBox.js';

/**
 * The credential an agent gives the engine for the private registry and the provider mirror of
 * the job's owner (issue 28): OpenTofu sends a host's credentials as a bearer token, so, unlike the
 * state token, the token names its job, worker and owner itself, sealed by the server's `SecretBox`
 * (nothing is stored). It reads the registry of that one owner only, and only while the job runs:
 * `JobRegistryActor` is checked against the job's record at every request. Never a person's token.
 */
const JOB_REGISTRY_TOKEN_PREFIX = 'trr_';
const CONTEXT = 'job-registry-token:v1';

/** The job a registry request acts for. */
export interface JobRegistryActor {
  jobId: string;
  workerId: string;
  ownerId: string;
  /** The HTTP request acting; absent outside a request. */
  request?: RequestContext;
}

export function isJobRegistryToken(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(JOB_REGISTRY_TOKEN_PREFIX);
}

export async function issueJobRegistryToken(secrets: SecretBox, job: JobRegistryActor): Promise<string> {
  const claims = JSON.stringify({ j: job.jobId, w: job.workerId, o: job.ownerId });
  return JOB_REGISTRY_TOKEN_PREFIX + (await secrets.seal(claims, CONTEXT));
}

/** What the token names, or `401 invalid_token` when it is not one this server sealed. */
export async function openJobRegistryToken(secrets: SecretBox, token: string): Promise<JobRegistryActor> {
  const refuse = () => new UnauthorizedError('invalid_token', 'the bearer token is not valid');
  let claims: unknown;
  try {
    claims = JSON.parse(await secrets.open(token.slice(JOB_REGISTRY_TOKEN_PREFIX.length), CONTEXT));
  } catch {
    throw refuse();
  }
  const { j, w, o } = (claims ?? {}) as Record<string, unknown>;
  if (!isUuid(j) || !isUuid(w) || !isUuid(o)) throw refuse();
  return { jobId: j, workerId: w, ownerId: o };
}
