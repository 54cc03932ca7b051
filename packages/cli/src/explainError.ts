import { TrellisApiError, TrellisConnectionError } from '@trellis/client';
import { UsageError } from 'clipanion';
import { CliError } from './errors.js';
import { ExitCode } from './exitCodes.js';
import { describeFields } from './fieldIssues.js';

export interface ExplainedError {
  message: string;
  exitCode: ExitCode;
  /** For usage errors: print the command's usage line after the message. */
  showUsage: boolean;
  error: unknown;
}

/** What the command knew when it failed, to say it in the reader's terms. */
export interface ErrorContext {
  /** The organization the command acted in (from `--org` or its `<org>` argument), by name. */
  orgName?: string | undefined;
  /** The credentials came from `TRELLIS_TOKEN` (a refused one is not fixed by `trellis login`). */
  tokenFromEnv?: boolean;
  /** The flag (`--drift-interval`) that gave an API field (`drift_detection.interval_minutes`), if any. */
  flagFor?: (field: string) => string | undefined;
  /** The configuration the command named, and the plan job it gave, to fill in the commands it suggests. */
  configName?: string | undefined;
  planJobId?: string | undefined;
}

/** Turns anything thrown by a command into one readable line and an exit code. */
export function explainError(error: unknown, context: ErrorContext = {}): ExplainedError {
  if (error instanceof CliError) return { message: error.message, exitCode: error.exitCode, showUsage: false, error };
  if (error instanceof UsageError) return { message: error.message, exitCode: ExitCode.USAGE, showUsage: true, error };
  if (error instanceof TrellisConnectionError) {
    return { message: error.message, exitCode: ExitCode.UNREACHABLE, showUsage: false, error };
  }
  if (error instanceof TrellisApiError) {
    const detail = describeFields(error, context.flagFor);
    if (error.status === 401) {
      // With TRELLIS_TOKEN no login is involved: the token itself was refused (revoked, expired).
      const advice = context.tokenFromEnv
        ? 'TRELLIS_TOKEN was refused (revoked, expired or mistyped?)'
        : 'run `trellis login`';
      return {
        message: `${detail} [${error.code}]; ${advice}`,
        exitCode: ExitCode.AUTH,
        showUsage: false,
        error,
      };
    }
    if (error.status === 403 && error.code === 'insufficient_role') {
      return { message: insufficientRole(error, context), exitCode: ExitCode.FORBIDDEN, showUsage: false, error };
    }
    if (error.status === 403 && error.code === 'org_token_not_allowed') {
      // Only a person does this: TRELLIS_TOKEN holds an organization token (issue 23).
      return {
        message: `${detail} [${error.code}]; use a personal token or \`trellis login\``,
        exitCode: ExitCode.FORBIDDEN,
        showUsage: false,
        error,
      };
    }
    const review = planReviewAdvice(error, context);
    if (review !== null) return { message: review, exitCode: ExitCode.FAILURE, showUsage: false, error };
    if (error.code === 'org_busy' && context.orgName !== undefined) {
      // Say where the jobs that hold the organization are, in commands the reader can run.
      const org = shellWord(context.orgName);
      return {
        message: `${detail} [${error.code}]; \`trellis jobs list --org ${org} --status QUEUED\` (and PROCESSING) shows them, \`trellis jobs cancel\` with a job's id cancels it`,
        exitCode: ExitCode.FAILURE,
        showUsage: false,
        error,
      };
    }
    return { message: `${detail} [${error.code}]`, exitCode: ExitCode.FAILURE, showUsage: false, error };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { message: `unexpected error: ${message}`, exitCode: ExitCode.FAILURE, showUsage: false, error };
}

/** "your role in acme is viewer; this needs operator", from the problem's `role` and `required_role`. */
function insufficientRole(error: TrellisApiError, context: ErrorContext): string {
  const { role, required_role: required, org_name: orgName } = error.extensions;
  const where = typeof orgName === 'string' ? orgName : (context.orgName ?? 'this organization');
  if (typeof role !== 'string' || typeof required !== 'string') return `${error.detail} [${error.code}]`;
  return `your role in ${where} is ${role}; this needs ${required} (an admin or owner of ${where} can change your role) [${error.code}]`;
}

/** A name or id as it is typed in a shell command. */
function shellWord(text: string): string {
  return /^[\w.-]+$/.test(text) ? text : JSON.stringify(text);
}

/** The deploy gate of issue 15, said with the command that gets past it, naming the real plan and configuration. */
function planReviewAdvice(error: TrellisApiError, context: ErrorContext): string | null {
  const config = context.configName !== undefined ? shellWord(context.configName) : undefined;
  const plan = context.planJobId;
  const planAgain = config ? `\`trellis plan ${config}\`` : '`trellis plan` with the configuration';
  switch (error.code) {
    case 'policy_failed': {
      const failed = Array.isArray(error.extensions.failed_policies)
        ? (error.extensions.failed_policies as { name?: unknown; messages?: unknown }[])
        : [];
      const lines = failed.map((policy) => {
        const messages = Array.isArray(policy.messages) ? policy.messages.map(String) : [];
        return `  ${String(policy.name)}: ${messages.length > 0 ? messages.join('; ') : 'denied'}`;
      });
      return [
        `the plan failed ${lines.length === 1 ? 'a mandatory policy' : 'mandatory policies'} [${error.code}]:`,
        ...lines,
        plan
          ? `an admin may override it: \`trellis override ${plan} --reason "..."\``
          : 'an admin may override the plan with `trellis override` and its job id',
      ].join('\n');
    }
    case 'approval_required':
      if (!plan) {
        return `${error.detail} [${error.code}]; queue one with ${planAgain}, have it approved (\`trellis approve\` with its job id), then deploy it with \`--plan\``;
      }
      return `${error.detail} [${error.code}]; approve the plan with \`trellis approve ${plan}\`, then \`trellis deploy ${config ?? 'the configuration'} --plan ${plan}\``;
    case 'plan_rejected':
      return `${error.detail} [${error.code}]; queue a new plan with ${planAgain}`;
    // The deploy gate of issue 23 names the configuration and the commands in its detail.
    case 'plan_required':
    case 'policy_unchecked':
    case 'plan_kind_mismatch':
      return `${error.detail} [${error.code}]`;
    default:
      return null;
  }
}
