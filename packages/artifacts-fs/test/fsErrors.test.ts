import { InsufficientStorageError, UnavailableError, ValidationError } from '@trellis/core';
import { describe, expect, it } from 'vitest';
import { toDomainError } from '../src/fsErrors.js';

/** The shape `node:fs` throws, e.g. for a full disk during a write. */
function systemError(code: string, syscall = 'write', path = '/srv/trellis/artifacts/tmp/1.partial'): Error {
  return Object.assign(new Error(`${code}: ${syscall} '${path}'`), { code, syscall, path, errno: -1 });
}

describe('filesystem errors become domain errors', () => {
  it.each([
    ['ENOSPC', 'no space left on device'],
    ['EDQUOT', 'disk quota exceeded'],
  ])('%s is InsufficientStorageError (507) naming the errno but not the path', (code, reason) => {
    const cause = systemError(code);
    const error = toDomainError(cause, 'write the artifact');
    expect(error).toBeInstanceOf(InsufficientStorageError);
    expect(error).toMatchObject({
      code: 'insufficient_storage',
      message: `artifact storage cannot write the artifact: ${reason} (${code}); nothing was stored, free space on the artifact volume`,
      cause,
    });
    expect((error as Error).message).not.toContain('/srv/trellis');
  });

  it.each([
    ['EACCES', 'permission denied'],
    ['EPERM', 'operation not permitted'],
    ['EROFS', 'read-only file system'],
    ['EIO', 'input/output error'],
    ['ESTALE', 'filesystem error'],
  ])('%s is UnavailableError (503) naming the errno but not the path', (code, reason) => {
    const cause = systemError(code);
    const error = toDomainError(cause, 'write the artifact');
    expect(error).toBeInstanceOf(UnavailableError);
    expect(error).toMatchObject({
      code: 'artifact_store_unavailable',
      message: `artifact storage cannot write the artifact: ${reason} (${code})`,
      cause,
    });
  });

  it('ENAMETOOLONG is a bad key (400)', () => {
    expect(toDomainError(systemError('ENAMETOOLONG', 'open'), 'write')).toBeInstanceOf(ValidationError);
  });

  it('errors that did not come from the filesystem pass through unchanged', () => {
    const bodyError = new Error('client went away');
    const nodeBug = Object.assign(new RangeError('out of range'), { code: 'ERR_OUT_OF_RANGE' });
    expect(toDomainError(bodyError, 'write')).toBe(bodyError);
    expect(toDomainError(nodeBug, 'write')).toBe(nodeBug);
  });
});
