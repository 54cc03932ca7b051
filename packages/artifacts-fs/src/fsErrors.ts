import { InsufficientStorageError, UnavailableError, ValidationError } from '@trellis/core';

/** A Node.js system error (`ENOENT`, `ENOSPC`, ...) as thrown by `node:fs`. */
export interface SystemError extends Error {
  code: string;
  syscall: string;
  path?: string;
}

/** System errors carry the failed `syscall`; Node's own `ERR_*` errors (bugs, not I/O) do not. */
export function isSystemError(error: unknown): error is SystemError {
  const candidate = error as Partial<SystemError> | undefined;
  return error instanceof Error && typeof candidate?.code === 'string' && typeof candidate.syscall === 'string';
}

export function hasCode(error: unknown, ...codes: string[]): boolean {
  return isSystemError(error) && codes.includes(error.code);
}

const REASONS: Record<string, string> = {
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  EIO: 'input/output error',
  ENOENT: 'the storage directory is missing',
  ENOTDIR: 'the storage directory is missing',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files',
};

/** The filesystem is out of space (or its quota for our user): freeing space is the fix, not a retry. */
const FULL = new Set(['ENOSPC', 'EDQUOT']);

/**
 * Translates a filesystem error into a domain error so that no caller ever sees `ENOSPC`.
 * A full disk or quota is `InsufficientStorageError` (`507`); anything else the filesystem
 * refuses is the store being unavailable (`503`); a name too long for it is a bad key. Messages
 * name the action and the errno but not the path, which stays in `cause`.
 */
export function toDomainError(error: unknown, action: string): unknown {
  if (!isSystemError(error)) return error;
  if (error.code === 'ENAMETOOLONG') {
    return new ValidationError(
      'artifact key is too long for the filesystem',
      [{ path: 'key', message: 'too long' }],
      'invalid_artifact_key',
    );
  }
  const reason = REASONS[error.code] ?? 'filesystem error';
  if (FULL.has(error.code)) {
    return new InsufficientStorageError(
      'insufficient_storage',
      `artifact storage cannot ${action}: ${reason} (${error.code}); nothing was stored, free space on the artifact volume`,
      { cause: error },
    );
  }
  return new UnavailableError(
    'artifact_store_unavailable',
    `artifact storage cannot ${action}: ${reason} (${error.code})`,
    {
      cause: error,
    },
  );
}

/** Runs one filesystem operation, translating its failure; errors of other origins pass unchanged. */
export async function fsOp<T>(action: string, operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw toDomainError(error, action);
  }
}
