/** The exit codes of `trellis`, documented in `trellis --help` and docs/cli.md. Never reassigned. */
export const ExitCode = {
  /** The command did what was asked; a followed job ended in SUCCESS. */
  OK: 0,
  /** A followed job FAILED, or the server refused the request. */
  FAILURE: 1,
  /** Bad flags or arguments. */
  USAGE: 2,
  /** Not logged in, or the login expired or was revoked: run `trellis login`. */
  AUTH: 3,
  /** The control plane could not be reached. */
  UNREACHABLE: 4,
  /** A followed job was CANCELLED. */
  CANCELLED: 5,
  /** Your role in the organization does not allow this (`insufficient_role`), or an organization token may not (`org_token_not_allowed`). */
  FORBIDDEN: 6,
  /** Interrupted (Ctrl-C) while waiting. */
  INTERRUPTED: 130,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export const EXIT_CODES_HELP = [
  '`0` success (a followed job ended in SUCCESS)',
  '`1` a followed job FAILED, or the server refused the request',
  '`2` usage error: unknown flag, missing or bad argument',
  '`3` not logged in, or the login expired or was revoked (run `trellis login`)',
  '`4` the control plane could not be reached',
  '`5` a followed job was CANCELLED',
  '`6` your role in the organization does not allow this, or an organization token may not',
  '`130` interrupted with Ctrl-C',
];
