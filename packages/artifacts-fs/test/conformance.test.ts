import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { openFsArtifactStore } from '@trellis/artifacts-fs';
import {
  canMountTmpfs,
  describeArtifactStoreConformance,
  describeFullStorageConformance,
  mountTmpfs,
  type Tmpfs,
} from '@trellis/testkit';
import { afterAll, beforeAll, describe } from 'vitest';

describeArtifactStoreConformance('fs', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'trellis-artifacts-'));
  const store = await openFsArtifactStore(pathToFileURL(dir).href);
  return { store, close: () => rm(dir, { recursive: true, force: true }) };
});

// A real full disk: an 8 MiB tmpfs filled by a file, so the ENOSPC is the kernel's. Mounting needs root.
describe.skipIf(!canMountTmpfs)('fs on a tmpfs (mounting one needs root)', () => {
  let tmpfs: Tmpfs;
  let stores = 0;
  beforeAll(() => {
    tmpfs = mountTmpfs(8 * 1024 * 1024, 'trellis-artifacts-full-');
  });
  afterAll(() => {
    tmpfs?.unmount();
  });

  describeFullStorageConformance('fs on a tmpfs', async () => {
    const root = join(tmpfs.dir, `store-${++stores}`);
    const store = await openFsArtifactStore(pathToFileURL(root).href);
    return {
      store,
      fill: async (leaveBytes) => tmpfs.fill(leaveBytes),
      free: async () => tmpfs.free(),
      async close() {
        tmpfs.free();
        // A refused write leaves no temp file behind to keep the disk full.
        const left = await readdir(join(root, 'tmp'));
        await rm(root, { recursive: true, force: true });
        if (left.length > 0) throw new Error(`left behind in tmp/: ${JSON.stringify(left)}`);
      },
    };
  });
});
