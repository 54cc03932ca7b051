import type { SecretBox } from '../ports/SecretBox.js';

/**
 * The credential an agent gives the engine for the control plane's `http` state backend, instead
 * of its own worker token (issue 10, finding 10). It is the job id sealed by the server's
 * `SecretBox` for one worker and one vine: it opens for that pair only, and the state routes accept
 * it only while that job runs (or winds down after a cancel), so it dies with the job. Nothing is
 * stored; rotating the encryption key ends the tokens of running jobs.
 */
const JOB_STATE_TOKEN_PREFIX = 'trj_';

function context(workerId: string, vineId: string): string {
  return `job-state-token:v1:${workerId}:${vineId}`;
}

export function isJobStateToken(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(JOB_STATE_TOKEN_PREFIX);
}

/** The token of a job of `vineId` claimed by `workerId`. */
export async function issueJobStateToken(
  secrets: SecretBox,
  job: { id: string; workerId: string; vineId: string },
): Promise<string> {
  return JOB_STATE_TOKEN_PREFIX + (await secrets.seal(job.id, context(job.workerId, job.vineId)));
}

/** The job id inside the token, or throws (`SecretBox.open`'s error) when it is not for this worker and vine. */
export function openJobStateToken(
  secrets: SecretBox,
  token: string,
  workerId: string,
  vineId: string,
): Promise<string> {
  return secrets.open(token.slice(JOB_STATE_TOKEN_PREFIX.length), context(workerId, vineId));
}
