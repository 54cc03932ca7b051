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
