import { InsufficientStorageError, UnavailableError } from '@trellis/core';
import { describe, expect, it } from 'vitest';
import { toDomainError } from '../src/s3Errors.js';

/** The shape the AWS SDK v3 throws for an S3 error answer. */
function s3Error(name: string, status: number, message: string): Error {
  return Object.assign(new Error(message), { name, $metadata: { httpStatusCode: status } });
}

describe('S3 errors of a full object store become insufficient_storage (507)', () => {
  it.each([
    [
      "MinIO's XMinioStorageFull (507)",
      s3Error(
        'XMinioStorageFull',
        507,
        'Storage backend has reached its minimum free drive threshold. Please delete a few objects to proceed.',
      ),
      'the object store is full (XMinioStorageFull)',
    ],
    ['any 507', s3Error('InsufficientStorage', 507, 'full'), 'the object store is full (InsufficientStorage)'],
    [
      "MinIO's 500 when a drive fills under a write",
      s3Error(
        'InternalError',
        500,
        'We encountered an internal error, please try again.: cause(no space left on device)',
      ),
      "the object store's disk is full (InternalError)",
    ],
  ])('%s', (_what, cause, reason) => {
    const error = toDomainError(cause, 'store the artifact');
    expect(error).toBeInstanceOf(InsufficientStorageError);
    expect(error).toMatchObject({
      code: 'insufficient_storage',
      message: `artifact storage (S3) cannot store the artifact: ${reason}; nothing was stored, free space in the object store`,
      cause,
    });
  });

  it('a body over the size limit of S3 (EntityTooLarge) or another 5xx stays unavailable (503)', () => {
    for (const cause of [
      s3Error('EntityTooLarge', 400, 'Your proposed upload exceeds the maximum allowed object size.'),
      s3Error('InternalError', 500, 'We encountered an internal error, please try again.'),
      s3Error('SlowDown', 503, 'Please reduce your request rate.'),
    ]) {
      expect(toDomainError(cause, 'store the artifact')).toBeInstanceOf(UnavailableError);
    }
  });
});
