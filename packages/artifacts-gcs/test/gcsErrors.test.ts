import { InsufficientStorageError, UnavailableError } from '@trellis/core';
import { describe, expect, it } from 'vitest';
import { toDomainError } from '../src/gcsErrors.js';

/** The shape of the GCS library's `ApiError`: the HTTP status in `code`. */
function apiError(code: number, message: string): Error {
  return Object.assign(new Error(message), { name: 'ApiError', code });
}

describe('GCS errors of a full object store become insufficient_storage (507)', () => {
  it.each([
    ['a 507', apiError(507, 'Insufficient Storage'), 'the object store is full (507)'],
    [
      'a disk that filled under a GCS-compatible server',
      apiError(500, 'write /storage/bucket/object: no space left on device'),
      "the object store's disk is full (no space left on device)",
    ],
  ])('%s', (_what, cause, reason) => {
    const error = toDomainError(cause, 'store the artifact');
    expect(error).toBeInstanceOf(InsufficientStorageError);
    expect(error).toMatchObject({
      code: 'insufficient_storage',
      message: `artifact storage (GCS) cannot store the artifact: ${reason}; nothing was stored, free space in the object store`,
    });
  });

  it('other server errors stay unavailable (503)', () => {
    expect(toDomainError(apiError(500, 'Internal Server Error'), 'store the artifact')).toBeInstanceOf(
      UnavailableError,
    );
  });
});
