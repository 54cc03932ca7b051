import { ValidationError } from '../domain/errors.js';
import type { ConfigSnapshot, Job, RunOptions } from '../domain/records.js';

/** The most addresses a run may name in `target` or `replace` (each). */
export const MAX_RUN_OPTION_ADDRESSES = 100;
const MAX_ADDRESS_LENGTH = 1024;

function invalid(path: string, message: string): ValidationError {
  return new ValidationError(`${path} ${message}`, [{ path, message }]);
}

function addresses(value: unknown, path: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw invalid(path, 'must be a list of resource addresses');
  if (value.length > MAX_RUN_OPTION_ADDRESSES) throw invalid(path, `must name at most ${MAX_RUN_OPTION_ADDRESSES}`);
  value.forEach((address, index) => {
    if (typeof address !== 'string' || address.trim() === '') {
      throw invalid(`${path}.${index}`, 'must be a non-empty address');
    }
    if (address.length > MAX_ADDRESS_LENGTH || /[\r\n\0]/.test(address)) {
      throw invalid(`${path}.${index}`, `must be one line of at most ${MAX_ADDRESS_LENGTH} characters`);
    }
  });
  return value.length === 0 ? undefined : (value as string[]).map((address) => address.trim());
}

/**
 * A PLAN's run options as a request sends them (`run_options`, issue 27), checked: `target` and
 * `replace` lists of at most 100 one-line addresses, `refresh_only: true`, `refresh: false`
 * (`-refresh-only` and `-refresh=false` do not go together). Null when none is set.
 */
export function parseRunOptions(value: unknown): RunOptions | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) throw invalid('run_options', 'must be an object');
  const input = value as Record<string, unknown>;
  for (const key of Object.keys(input)) {
    if (!['target', 'replace', 'refresh_only', 'refresh'].includes(key)) {
      throw invalid(`run_options.${key}`, 'is not a run option (target, replace, refresh_only, refresh)');
    }
  }
  if (input.refresh_only !== undefined && typeof input.refresh_only !== 'boolean') {
    throw invalid('run_options.refresh_only', 'must be a boolean');
  }
  if (input.refresh !== undefined && typeof input.refresh !== 'boolean') {
    throw invalid('run_options.refresh', 'must be a boolean');
  }
  const options: RunOptions = {};
  const target = addresses(input.target, 'run_options.target');
  const replace = addresses(input.replace, 'run_options.replace');
  if (target) options.target = target;
  if (replace) options.replace = replace;
  if (input.refresh_only === true) options.refresh_only = true;
  if (input.refresh === false) options.refresh = false;
  if (options.refresh_only && options.refresh === false) {
    throw invalid('run_options.refresh', 'cannot be false in a refresh-only plan');
  }
  return Object.keys(options).length === 0 ? null : options;
}

/**
 * The snapshot of a new job with its run options: a PLAN's own; a DEPLOY of a plan carries its
 * plan's (it applies that plan as planned, and its hash then equals the plan's).
 */
export function withRunOptions(
  snapshot: ConfigSnapshot,
  options: RunOptions | null,
  plan: Pick<Job, 'config_snapshot'> | null,
): ConfigSnapshot {
  const carried = options ?? plan?.config_snapshot.run_options ?? null;
  return carried === null ? snapshot : { ...snapshot, run_options: carried };
}
