import { readFileSync } from 'node:fs';
import { CliError } from '../../errors.js';

/** The Rego source of `--file` (`-` reads stdin). */
export function readModule(path: string): string {
  try {
    return readFileSync(path === '-' ? 0 : path, 'utf8');
  } catch (error) {
    throw new CliError(`cannot read the policy module ${path}: ${(error as Error).message}`);
  }
}
