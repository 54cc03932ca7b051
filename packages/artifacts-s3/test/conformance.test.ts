import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openS3ArtifactStore, STAGING_SEGMENT } from '@trellis/artifacts-s3';
import { type ArtifactStore, InsufficientStorageError } from '@trellis/core';
import {
  canMountTmpfs,
  describeArtifactStoreConformance,
  describeFullStorageConformance,
  type MinioServer,
  mountTmpfs,
  requirePeer,
  startMinio,
  type Tmpfs,
} from '@trellis/testkit';
import { afterAll, beforeAll, describe } from 'vitest';

const minioBinary = requirePeer('minio', 'ArtifactStore conformance: S3 on MinIO');

async function openOn(minio: MinioServer) {
  const bucket = await minio.createBucket();
  const store = await openS3ArtifactStore(
    `s3://${bucket}/trellis/artifacts?endpoint=${encodeURIComponent(minio.endpoint)}&path_style=true&region=${minio.region}`,
    { env: { AWS_ACCESS_KEY_ID: minio.accessKeyId, AWS_SECRET_ACCESS_KEY: minio.secretAccessKey } },
  );
  return {
    store,
    // After each test nothing may be left over: no staging object and no multipart upload,
    // whatever the test did (over the limit, failing bodies, concurrent writers, a full drive).
    async close() {
      try {
        const uploads = await minio.listMultipartUploads(bucket);
        const staged = (await minio.listObjects(bucket)).filter((name) => name.includes(`/${STAGING_SEGMENT}/`));
        if (uploads.length > 0 || staged.length > 0) {
          throw new Error(
            `left behind: ${uploads.length} multipart upload(s) ${JSON.stringify(uploads)}, staging objects ${JSON.stringify(staged)}`,
          );
        }
      } finally {
        store.client.destroy();
      }
    },
  };
}

describe.skipIf(!minioBinary)('S3 on MinIO', () => {
  let minio: MinioServer;
  beforeAll(async () => {
    minio = await startMinio(minioBinary as string);
  });
  afterAll(async () => {
    await minio?.stop();
  });

  // A fresh bucket per test.
  describeArtifactStoreConformance('S3 on MinIO', () => openOn(minio));
});

// A real full drive: MinIO on a 64 MiB tmpfs filled by a file. Mounting needs root.
describe.skipIf(!minioBinary || !canMountTmpfs)('S3 on MinIO on a tmpfs (mounting one needs root)', () => {
  let tmpfs: Tmpfs;
  let minio: MinioServer;
  beforeAll(async () => {
    tmpfs = mountTmpfs(64 * 1024 * 1024, 'trellis-minio-full-');
    minio = await startMinio(minioBinary as string, {}, { drive: join(tmpfs.dir, 'drive') });
  });
  afterAll(async () => {
    await minio?.stop();
    tmpfs?.unmount();
  });

  describeFullStorageConformance('S3 on MinIO on a tmpfs', async () => {
    const harness = await openOn(minio);
    return {
      ...harness,
      fill: async (leaveBytes) => tmpfs.fill(leaveBytes),
      free: async () => {
        tmpfs.free();
        await takesWritesAgain(harness.store);
      },
      async close() {
        tmpfs.free();
        await harness.close();
      },
    };
  });
});

/**
 * MinIO answers a write from the free space it last read of its drive, which it keeps for a
 * moment: right after the filler is removed a write can still be refused as full. Waits until a
 * small probe is taken (and removes it), at most 30 s; any other refusal fails at once.
 */
async function takesWritesAgain(store: ArtifactStore): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await store.put(
        'full/probe',
        (async function* () {
          yield Buffer.from('probe');
        })(),
        { maxBytes: 1024 },
      );
      await store.delete('full/probe');
      return;
    } catch (error) {
      if (!(error instanceof InsufficientStorageError) || Date.now() > deadline) throw error;
      await sleep(250);
    }
  }
}
