import type { RunOptions } from '@trellis/core';
import { JobFailure } from './errors.js';

/**
 * The engine's plan arguments of a PLAN's run options (issue 27): `-target=ADDR` and
 * `-replace=ADDR` for each address, `-refresh-only`, `-refresh=false`. Each address is one
 * argument (no shell), and one that could be read as another option or line is refused.
 */
export function runOptionArgs(options: RunOptions | undefined): string[] {
  if (!options) return [];
  const args: string[] = [];
  const each = (flag: string, addresses: string[] | undefined) => {
    for (const address of addresses ?? []) {
      if (address === '' || /[\r\n\0]/.test(address)) {
        throw new JobFailure(
          `the run option ${flag} names an address that is not one line: ${JSON.stringify(address)}`,
        );
      }
      args.push(`${flag}=${address}`);
    }
  };
  each('-target', options.target);
  each('-replace', options.replace);
  if (options.refresh_only === true) args.push('-refresh-only');
  if (options.refresh === false) args.push('-refresh=false');
  return args;
}
