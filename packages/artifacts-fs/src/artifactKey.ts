import { join, relative, sep } from 'node:path';
import { artifactKeySegments, invalidArtifactKey } from '@trellis/core';

/**
 * Every object file ends with this suffix and no directory may, so the key `a` (file `a.artifact`)
 * and the key `a/b` (directory `a`) live side by side as they do in S3 and GCS.
 */
export const OBJECT_FILE_SUFFIX = '.artifact';

/** Most filesystems limit a name to 255 bytes. */
const MAX_NAME_BYTES = 255;

/**
 * Maps a slash-separated key to its file below `objectsDir`, or throws `ValidationError` for a key
 * that breaks core's key rules (`artifactKeySegments`) or the limits of a filesystem.
 */
export function objectPathForKey(objectsDir: string, key: string): string {
  const segments = parseKey(key);
  const last = segments.length - 1;
  const path = join(objectsDir, ...segments.map((segment, i) => (i === last ? segment + OBJECT_FILE_SUFFIX : segment)));
  // Defence in depth: whatever the rules above miss, the path must stay below the root.
  const below = relative(objectsDir, path);
  if (below === '' || below.startsWith(`..${sep}`) || below === '..')
    throw invalidArtifactKey(key, 'escapes the store');
  return path;
}

function parseKey(key: string): string[] {
  const segments = artifactKeySegments(key);
  segments.forEach((segment, i) => {
    const isLast = i === segments.length - 1;
    if (!isLast && segment.endsWith(OBJECT_FILE_SUFFIX)) {
      throw invalidArtifactKey(key, `has a directory segment ending with "${OBJECT_FILE_SUFFIX}"`);
    }
    const budget = isLast ? MAX_NAME_BYTES - OBJECT_FILE_SUFFIX.length : MAX_NAME_BYTES;
    if (Buffer.byteLength(segment) > budget) throw invalidArtifactKey(key, `has a segment longer than ${budget} bytes`);
  });
  return segments;
}
