import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ValidationError } from '@trellis/core';
import { FsArtifactStore } from './FsArtifactStore.js';
import { fsOp } from './fsErrors.js';

/**
 * Opens the store for `TRELLIS_ARTIFACTS_URL=file:///abs/dir` (or a plain path, resolved against
 * the working directory), creating the directory, and clears temp files a crash left behind.
 */
export async function openFsArtifactStore(url: string): Promise<FsArtifactStore> {
  const store = new FsArtifactStore(rootDirectoryFromUrl(url));
  await fsOp('create its directory', async () => {
    await mkdir(store.objectsDir, { recursive: true, mode: 0o700 });
    await mkdir(store.tempDir, { recursive: true, mode: 0o700 });
  });
  await store.removeStaleTempFiles();
  return store;
}

/** `file:` URL or plain path -> absolute directory; any other scheme is a configuration mistake. */
export function rootDirectoryFromUrl(url: string): string {
  if (url.trim() === '') throw invalidUrl(url, 'is empty');
  const isWindowsDrive = /^[a-z]:[\\/]/i.test(url);
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  if (scheme === undefined || isWindowsDrive) return resolve(url);
  if (scheme !== 'file') throw invalidUrl(url, `has scheme "${scheme}:", not "file:"`);
  try {
    return fileURLToPath(url);
  } catch {
    throw invalidUrl(url, 'is not a local file URL (file:///absolute/path)');
  }
}

function invalidUrl(url: string, reason: string): ValidationError {
  return new ValidationError(
    `artifact store URL ${JSON.stringify(url)} ${reason}`,
    [{ path: 'url', message: reason }],
    'invalid_artifacts_url',
  );
}
