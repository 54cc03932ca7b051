import { ValidationError } from '../domain/errors.js';

/**
 * The artifact key rules, written once for every `ArtifactStore` adapter (filesystem, S3, GCS),
 * and the object names of keys in a bucket for the object-storage adapters.
 */

/**
 * First segment of the names that earlier versions staged uploads under before a copy committed
 * them; no artifact key may start with it, so what a crashed server of that time left there never
 * shadows an artifact (a lifecycle rule clears it, docs/storage.md).
 */
export const STAGING_SEGMENT = '.trellis-staging';

/** S3 and GCS both limit an object name to 1024 bytes of UTF-8. */
const MAX_NAME_BYTES = 1024;

/**
 * `s3://bucket/a/b/` or `gs://bucket/a/b/` -> prefix `a/b`: slashes trimmed, the same segment rules as keys (an empty
 * prefix puts objects at the top of the bucket).
 */
export function normalizePrefix(raw: string): string {
  const prefix = raw.replace(/^\/+|\/+$/g, '');
  if (prefix === '') return '';
  const problem = segmentProblem(prefix);
  if (problem) {
    throw new ValidationError(
      `artifact store prefix ${JSON.stringify(prefix)} ${problem}`,
      [{ path: 'url', message: problem }],
      'invalid_artifacts_url',
    );
  }
  return prefix;
}

/**
 * The segments of a valid artifact key, or `ValidationError` (`invalid_artifact_key`) for a key
 * that is empty, has empty, `.` or `..` segments (so it is a safe relative path), a backslash, a
 * control character, or starts with the staging segment. Every store applies this rule; a store
 * may add limits of its medium (name lengths), never relax it.
 */
export function artifactKeySegments(key: string): string[] {
  if (typeof key !== 'string' || key.length === 0) throw invalidArtifactKey(key, 'is empty');
  const problem = segmentProblem(key);
  if (problem) throw invalidArtifactKey(key, problem);
  const segments = key.split('/');
  if (segments[0] === STAGING_SEGMENT) {
    throw invalidArtifactKey(key, `starts with the reserved "${STAGING_SEGMENT}"`);
  }
  return segments;
}

/** The object name of an artifact key (`artifactKeySegments`) below `prefix`. */
export function objectNameForKey(prefix: string, key: string): string {
  artifactKeySegments(key);
  const name = prefix === '' ? key : `${prefix}/${key}`;
  if (Buffer.byteLength(name) > MAX_NAME_BYTES) throw invalidArtifactKey(key, `is longer than ${MAX_NAME_BYTES} bytes`);
  return name;
}

function segmentProblem(path: string): string | undefined {
  if (path.includes('\\')) return 'contains a backslash';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
  if (/[\u0000-\u001f\u007f]/.test(path)) return 'contains a control character';
  for (const segment of path.split('/')) {
    if (segment === '') return 'has an empty segment (leading, trailing or double slash)';
    if (segment === '.' || segment === '..') return `has a "${segment}" segment`;
  }
  return undefined;
}

/** The error of a key that breaks the rules, `reason` saying which. */
export function invalidArtifactKey(key: unknown, reason: string): ValidationError {
  const shown = typeof key === 'string' ? JSON.stringify(key.slice(0, 200)) : typeof key;
  return new ValidationError(
    `artifact key ${shown} ${reason}`,
    [{ path: 'key', message: reason }],
    'invalid_artifact_key',
  );
}
