import { TrellisApiError } from '@trellis/client';
import { CliError } from '../../errors.js';

/** A configuration name as a person types it again in a command. */
export function shellName(name: string): string {
  return /^[\w.-]+$/.test(name) ? name : JSON.stringify(name);
}

/**
 * The API's refusals of a change or deletion, said in the terms of the command the person typed:
 * the flag instead of the field, the command to run next.
 */
export function explainEditError(error: unknown, typed: string, flags: Record<string, string> = {}): unknown {
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
    case 'validation_failed': {
      if (error.errors.length === 0) return error;
      const said = error.errors.map((issue) => `${flagOf(issue.path, flags)} ${issue.message}`);
      return new CliError(`${[...new Set(said)].join('; ')} [${error.code}]`);
    }
    default:
      return error;
  }
}

/** `variables.region` → `--var region`; `source.files.main.tf` → `--dir (main.tf)`; else the mapped flag. */
function flagOf(path: string, flags: Record<string, string>): string {
  const variable = /^variables\.([^.]+)/.exec(path);
  if (variable) return `--var ${variable[1]}`;
  const file = /^source\.files\.(.+)$/.exec(path);
  if (file) return `--dir (file ${file[1]})`;
  const top = path.split('.')[0] as string;
  return flags[path] ?? flags[top] ?? path;
}
