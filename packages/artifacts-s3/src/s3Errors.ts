import { InsufficientStorageError, isDomainError, UnavailableError } from '@trellis/core';

/** What an S3 or transport error carries that we look at. */
interface S3LikeError {
  name?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

const CREDENTIAL_ERRORS = new Set([
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'InvalidToken',
  'ExpiredToken',
  'TokenRefreshRequired',
  'InvalidClientTokenId',
  'AuthorizationHeaderMalformed',
]);

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);

/** The error is S3's "no such key" (GetObject's `NoSuchKey`, or a bodiless 404 on HEAD). */
export function isMissingKey(error: unknown): boolean {
  const e = error as S3LikeError;
  return e?.name === 'NoSuchKey' || (e?.name === 'NotFound' && e.$metadata?.httpStatusCode === 404);
}

/**
 * The object store refuses the write for want of space: MinIO's `XMinioStorageFull` (`507`, its
 * drives under their free-space threshold), any `507`, and the `500` MinIO answers when a drive
 * fills under a write (`InternalError` whose message names `no space left on device`).
 */
function storageFullReason(error: S3LikeError): string | undefined {
  const name = error.name ?? '';
  if (name === 'XMinioStorageFull' || error.$metadata?.httpStatusCode === 507) {
    return `the object store is full (${name || 507})`;
  }
  if (/no space left on device|disk quota exceeded/i.test(error.message ?? '')) {
    return `the object store's disk is full (${name || 'no space left on device'})`;
  }
  return undefined;
}

/** Why the store is unavailable, in words an operator can act on; undefined for non-S3 errors. */
function reasonOf(error: S3LikeError): string | undefined {
  const name = error.name ?? '';
  const status = error.$metadata?.httpStatusCode;
  if (name === 'NoSuchBucket') return 'the bucket does not exist';
  if (CREDENTIAL_ERRORS.has(name)) return `the credentials were refused (${name})`;
  if (name === 'CredentialsProviderError')
    return 'no AWS credentials were found (set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE or a role)';
  if (name === 'AccessDenied' || status === 403) return `access was denied (${name || 403}); check the bucket policy`;
  if (name === 'PermanentRedirect' || status === 301)
    return 'the bucket is in another region; set AWS_REGION or ?region=';
  if (name === 'TimeoutError' || name === 'AbortError' || name === 'RequestTimeout') return 'the request timed out';
  if (error.code && NETWORK_CODES.has(error.code)) return `cannot connect (${error.code})`;
  if (/region is missing/i.test(error.message ?? '')) return 'no region is configured; set AWS_REGION or ?region=';
  if (status !== undefined && status >= 500) return `the server answered ${status} (${name})`;
  if (status !== undefined) return `the server answered ${status} (${name})`;
  return undefined;
}

/**
 * Translates an S3 or transport error into a domain error (Verdaccio's `s3Errors.ts`), so no caller
 * sees `NoSuchBucket` or `ECONNREFUSED`: anything S3 refuses is the store being unavailable
 * (`503`), but a full one is `InsufficientStorageError` (`507`). Errors of other origins (a body
 * that failed, a bug) pass unchanged.
 */
export function toDomainError(error: unknown, action: string): unknown {
  if (isDomainError(error) || typeof error !== 'object' || error === null) return error;
  const full = storageFullReason(error as S3LikeError);
  if (full !== undefined) {
    return new InsufficientStorageError(
      'insufficient_storage',
      `artifact storage (S3) cannot ${action}: ${full}; nothing was stored, free space in the object store`,
      { cause: error },
    );
  }
  const reason = reasonOf(error as S3LikeError);
  if (reason === undefined) return error;
  return new UnavailableError('artifact_store_unavailable', `artifact storage (S3) cannot ${action}: ${reason}`, {
    cause: error,
  });
}
