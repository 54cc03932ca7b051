import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { openFsArtifactStore } from '@trellis/artifacts-fs';
import { describeArtifactStoreConformance } from '@trellis/testkit';

describeArtifactStoreConformance('fs', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'trellis-artifacts-'));
  const store = await openFsArtifactStore(pathToFileURL(dir).href);
  return { store, close: () => rm(dir, { recursive: true, force: true }) };
});
