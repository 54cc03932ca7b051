import { openGcsArtifactStore, STAGING_SEGMENT } from '@trellis/artifacts-gcs';
import { describeArtifactStoreConformance, type FakeGcsServer, requirePeer, startFakeGcs } from '@trellis/testkit';
import { afterAll, beforeAll, describe } from 'vitest';

const fakeGcsBinary = requirePeer('fake-gcs-server', 'ArtifactStore conformance: GCS on fake-gcs-server');

describe.skipIf(!fakeGcsBinary)('GCS on fake-gcs-server', () => {
  let gcs: FakeGcsServer;
  beforeAll(async () => {
    gcs = await startFakeGcs(fakeGcsBinary as string);
  });
  afterAll(async () => {
    await gcs?.stop();
  });

  // A fresh bucket per test; after each one, no staging object may be left, whatever the test did.
  describeArtifactStoreConformance('GCS on fake-gcs-server', async () => {
    const bucket = await gcs.createBucket();
    const store = await openGcsArtifactStore(
      `gs://${bucket}/trellis/artifacts?endpoint=${encodeURIComponent(gcs.endpoint)}`,
      {
        env: {},
      },
    );
    return {
      store,
      async close() {
        const staged = (await gcs.listObjects(bucket)).filter((name) => name.includes(`/${STAGING_SEGMENT}/`));
        if (staged.length > 0) throw new Error(`left behind: staging objects ${JSON.stringify(staged)}`);
      },
    };
  });
});
