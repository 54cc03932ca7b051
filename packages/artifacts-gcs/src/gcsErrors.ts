import { InsufficientStorageError, isDomainError, UnavailableError } from '@trellis/core';

/** What the GCS library's `ApiError`s, gaxios errors and Node network errors carry. */
interface GcsLikeError {
  name?: string;
  /** An HTTP status (ApiError) or a Node/gaxios error code such as `ECONNREFUSED`. */
  code?: number | string;
  status?: number;
  message?: string;
}

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

export function statusOf(error: unknown): number | undefined {
  const e = error as GcsLikeError | undefined;
  if (typeof e?.code === 'number') return e.code;
  if (typeof e?.status === 'number') return e.status;
  return undefined;
}

/** A 404 about the bucket rather than the object. */
export function isMissingBucket(error: unknown): boolean {
  return statusOf(error) === 404 && /bucket/i.test((error as GcsLikeError).message ?? '');
}

/**
 * Google Cloud Storage itself never fills; a server speaking its API on a disk that does (a
 * GCS-compatible store, fake-gcs-server) answers `507`, or an error naming the full disk.
 */
function storageFullReason(error: GcsLikeError): string | undefined {
  if (statusOf(error) === 507) return 'the object store is full (507)';
  if (/no space left on device|disk quota exceeded/i.test(error.message ?? '')) {
    return "the object store's disk is full (no space left on device)";
  }
  return undefined;
}

function reasonOf(error: GcsLikeError): string | undefined {
  const status = statusOf(error);
  const code = typeof error.code === 'string' ? error.code : undefined;
  const message = error.message ?? '';
  if (status === 404) return 'the bucket does not exist';
  if (status === 401) return 'the credentials were refused (401)';
  if (status === 403) return 'access was denied (403); check the IAM role on the bucket';
  if (/could not load the default credentials|unable to detect a project id/i.test(message)) {
    return 'no Google credentials were found (set GOOGLE_APPLICATION_CREDENTIALS or run on a service account)';
  }
  if (/invalid_grant|invalid_client|unauthorized_client/i.test(message)) return 'the credentials were refused';
  if (code && NETWORK_CODES.has(code)) return `cannot connect (${code})`;
  if (error.name === 'AbortError' || /timeout|timed out/i.test(message)) return 'the request timed out';
  if (status !== undefined) return `the server answered ${status}`;
  if (error.name === 'FetchError' || error.name === 'GaxiosError') return `the request failed (${message})`;
  return undefined;
}

/**
 * Translates a Google Cloud Storage or transport error into a domain error (as Verdaccio's
 * `s3Errors.ts` does for S3), so no caller sees an `ApiError` or `ECONNREFUSED`: anything GCS
 * refuses is the store being unavailable (`503`), but a full one is `InsufficientStorageError`
 * (`507`). Errors of other origins pass unchanged.
 */
export function toDomainError(error: unknown, action: string): unknown {
  if (isDomainError(error) || typeof error !== 'object' || error === null) return error;
  const full = storageFullReason(error as GcsLikeError);
  if (full !== undefined) {
    return new InsufficientStorageError(
      'insufficient_storage',
      `artifact storage (GCS) cannot ${action}: ${full}; nothing was stored, free space in the object store`,
      { cause: error },
    );
  }
  const reason = reasonOf(error as GcsLikeError);
  if (reason === undefined) return error;
  return new UnavailableError('artifact_store_unavailable', `artifact storage (GCS) cannot ${action}: ${reason}`, {
    cause: error,
  });
}
