import type { JsonObject } from '@trellis/core';

/** The job failed in a way the person who started it should read (it becomes `error_message`). */
export class JobFailure extends Error {
  override name = 'JobFailure';

  /** What the failed job still reports (a destroy stopped by a policy reports the policy results). */
  constructor(
    message: string,
    readonly metadata: JsonObject | null = null,
  ) {
    super(message);
  }
}

/** The job was stopped on purpose: cancelled, or the agent shutting down. */
export class JobInterrupted extends Error {
  override name = 'JobInterrupted';
}

/**
 * What a full disk (or quota) reads as in the engine's, git's and Node's errors; the engine wraps
 * long diagnostics, so the words may be split across lines (and its diagnostic box).
 */
const DISK_FULL_TEXT = /no[\s│]+space[\s│]+left[\s│]+on[\s│]+device|disk[\s│]+quota[\s│]+exceeded/i;
const DISK_FULL_CODES = new Set(['ENOSPC', 'EDQUOT']);

/** The text says a disk is full: a line the engine or git printed, or an error message. */
export function mentionsDiskFull(text: string): boolean {
  return DISK_FULL_TEXT.test(text);
}

/** A write of the agent's own (the source, the variables, a downloaded plan) failed on a full disk. */
export function isDiskFullError(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth += 1) {
    const code = (current as NodeJS.ErrnoException).code;
    if ((typeof code === 'string' && DISK_FULL_CODES.has(code)) || DISK_FULL_TEXT.test(current.message)) return true;
    current = current.cause;
  }
  return false;
}

/**
 * The failure of a job whose work directory filled (issue 30): it says so first, then what
 * failed, so the person reading the job knows to free space on the agent rather than to fix the
 * configuration. Nothing stored on the control plane is touched.
 */
export function agentDiskFull(what: string, workDir?: string): JobFailure {
  const where = workDir ? ` (${workDir})` : '';
  return new JobFailure(
    `the agent's disk is full: ${what}; free space in the agent's work directory${where}, then run the job again`,
  );
}
