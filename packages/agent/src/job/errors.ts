/** The job failed in a way the person who started it should read (it becomes `error_message`). */
export class JobFailure extends Error {
  override name = 'JobFailure';
}

/** The job was stopped on purpose: cancelled, or the agent shutting down. */
export class JobInterrupted extends Error {
  override name = 'JobInterrupted';
}
