import { type LockOptions, LockTimeoutError, withFileLock as withClientFileLock } from '@trellis/client';
import { CliError } from '../errors.js';

export type { LockOptions };

/** The login lock of `@trellis/client`, a timeout reported as a CLI error. */
export async function withFileLock<T>(path: string, work: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  try {
    return await withClientFileLock(path, work, options);
  } catch (error) {
    if (error instanceof LockTimeoutError) throw new CliError(error.message);
    throw error;
  }
}
