import { TrellisApiError, TrellisConnectionError } from '@trellis/client';
import { UsageError } from 'clipanion';
import { CliError } from './errors.js';
import { ExitCode } from './exitCodes.js';

export interface ExplainedError {
  message: string;
  exitCode: ExitCode;
  /** For usage errors: print the command's usage line after the message. */
  showUsage: boolean;
  error: unknown;
}

/** Turns anything thrown by a command into one readable line and an exit code. */
export function explainError(error: unknown, options: { tokenFromEnv?: boolean } = {}): ExplainedError {
  if (error instanceof CliError) return { message: error.message, exitCode: error.exitCode, showUsage: false, error };
  if (error instanceof UsageError) return { message: error.message, exitCode: ExitCode.USAGE, showUsage: true, error };
  if (error instanceof TrellisConnectionError) {
    return { message: error.message, exitCode: ExitCode.UNREACHABLE, showUsage: false, error };
  }
  if (error instanceof TrellisApiError) {
    const fields = error.errors.map((issue) => `${issue.path}: ${issue.message}`);
    const detail = fields.length > 0 ? `${error.detail} (${fields.join('; ')})` : error.detail;
    if (error.status === 401) {
      // With TRELLIS_TOKEN no login is involved: the token itself was refused (revoked, expired).
      const advice = options.tokenFromEnv
        ? 'TRELLIS_TOKEN was refused (revoked, expired or mistyped?)'
        : 'run `trellis login`';
      return {
        message: `${detail} [${error.code}]; ${advice}`,
        exitCode: ExitCode.AUTH,
        showUsage: false,
        error,
      };
    }
    return { message: `${detail} [${error.code}]`, exitCode: ExitCode.FAILURE, showUsage: false, error };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { message: `unexpected error: ${message}`, exitCode: ExitCode.FAILURE, showUsage: false, error };
}
