import { ExitCode } from './exitCodes.js';

/** A failure the CLI explains in one line and maps to an exit code; never shown with a stack. */
export class CliError extends Error {
  override name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: ExitCode = ExitCode.FAILURE,
  ) {
    super(message);
  }
}

/** No usable login: missing, for another server, expired or revoked. */
export class NotLoggedInError extends CliError {
  override name = 'NotLoggedInError';
  constructor(message: string) {
    super(message, ExitCode.AUTH);
  }
}

/** Ctrl-C ended a wait. */
export class InterruptedError extends CliError {
  override name = 'InterruptedError';
  constructor(message = 'interrupted') {
    super(message, ExitCode.INTERRUPTED);
  }
}
