import { openS3ArtifactStore, STAGING_SEGMENT } from '@trellis/artifacts-s3';
import { describeArtifactStoreConformance, type MinioServer, requirePeer, startMinio } from '@trellis/testkit';
import { afterAll, beforeAll, describe } from 'vitest';

const minioBinary = requirePeer('minio', 'ArtifactStore conformance: S3 on MinIO');

describe.skipIf(!minioBinary)('S3 on MinIO', () => {
  let minio: MinioServer;
  beforeAll(async () => {
    minio = await startMinio(minioBinary as string);
  });
  afterAll(async () => {
    await minio?.stop();
  });

  // A fresh bucket per test; after each one, nothing may be left over: no staging object and no
  // multipart upload, whatever the test did (over the limit, failing bodies, concurrent writers).
  describeArtifactStoreConformance('S3 on MinIO', async () => {
    const bucket = await minio.createBucket();
    const store = await openS3ArtifactStore(
      `s3://${bucket}/trellis/artifacts?endpoint=${encodeURIComponent(minio.endpoint)}&path_style=true&region=${minio.region}`,
      { env: { AWS_ACCESS_KEY_ID: minio.accessKeyId, AWS_SECRET_ACCESS_KEY: minio.secretAccessKey } },
    );
    return {
      store,
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
  });
});
