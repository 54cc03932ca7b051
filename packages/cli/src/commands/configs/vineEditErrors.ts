import { TrellisApiError } from '@trellis/client';
import { CliError } from '../../errors.js';

/** A configuration name as a person types it again in a command. */
export function shellName(name: string): string {
  return /^[\w.-]+$/.test(name) ? name : JSON.stringify(name);
}

/**
 * The API's refusals of a change or deletion, said in the terms of the command the person typed:
 * the name they gave, the command to run next (fields become flags through `fieldFlags`).
 */
export function explainEditError(error: unknown, typed: string): unknown {
  if (!(error instanceof TrellisApiError)) return error;
  const name = shellName(typed);
  switch (error.code) {
    case 'configuration_not_found':
      return new CliError(`no configuration named "${typed}" (\`trellis configs list\` shows yours)`);
    case 'vineyard_not_found':
      return new CliError(`no vineyard named "${typed}" (\`trellis vineyards list\` shows yours)`);
    case 'vine_has_resources':
      return new CliError(
        `${error.detail.replace(/: destroy it first.*$/, '')}: run \`trellis destroy ${name}\` first, or \`trellis configs delete ${name} --force\` to leave them running unmanaged [${error.code}]`,
      );
    case 'configuration_busy':
      return new CliError(
        `${error.detail} (\`trellis jobs list --status PROCESSING\` shows it, \`trellis jobs cancel ID\` cancels it) [${error.code}]`,
      );
    default:
      return error;
  }
}
