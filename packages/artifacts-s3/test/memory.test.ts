import { createHash, randomFillSync } from 'node:crypto';
import { openS3ArtifactStore } from '@trellis/artifacts-s3';
import { type MinioServer, requirePeer, startMinio } from '@trellis/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const MiB = 1024 * 1024;
const minioBinary = requirePeer('minio', 'S3 artifact store memory on MinIO');

// In a file of its own, so the worker's RSS is not inflated by other tests' data.
describe.skipIf(!minioBinary)('S3 artifact store memory', () => {
  let minio: MinioServer;
  beforeAll(async () => {
    minio = await startMinio(minioBinary as string);
  });
  afterAll(async () => {
    await minio?.stop();
  });

  it('a 60 MiB streamed put grows RSS by about one part, not by the body', async () => {
    const bucket = await minio.createBucket();
    const store = await openS3ArtifactStore(
      `s3://${bucket}/m?endpoint=${encodeURIComponent(minio.endpoint)}&path_style=true&region=us-east-1`,
      { env: { AWS_ACCESS_KEY_ID: minio.accessKeyId, AWS_SECRET_ACCESS_KEY: minio.secretAccessKey } },
    );
    try {
      // Warm the client up (code, connections) so they are not counted.
      await store.put(
        'warm/up',
        (async function* () {
          yield Buffer.alloc(6 * MiB, 1);
        })(),
        { maxBytes: 10 * MiB },
      );
      const size = 60 * MiB;
      const chunkSize = 64 * 1024;
      // A small ring of reused buffers: the producer makes no garbage of its own, and a store that
      // kept a chunk past the next pull would store overwritten bytes (the digest check catches it).
      const ring = Array.from({ length: 4 }, () => Buffer.alloc(chunkSize));
      const sent = createHash('sha256');
      const baseline = process.memoryUsage.rss();
      let peak = baseline;
      async function* body(): AsyncGenerator<Uint8Array> {
        for (let i = 0; i < size / chunkSize; i += 1) {
          const chunk = randomFillSync(ring[i % ring.length] as Buffer);
          sent.update(chunk);
          if (i % 16 === 0) peak = Math.max(peak, process.memoryUsage.rss());
          yield chunk;
        }
      }
      const stored = await store.put('big/object', body(), { maxBytes: size });
      peak = Math.max(peak, process.memoryUsage.rss());
      const expected = sent.digest('hex');
      expect(stored).toEqual({ size, sha256: expected });
      // At most one 5 MiB part buffer (the pool kept the warm-up's) and the SDK's request
      // machinery; the body is 60 MiB.
      expect(peak - baseline, `RSS grew by ${((peak - baseline) / MiB).toFixed(1)} MiB`).toBeLessThanOrEqual(16 * MiB);

      const got = await store.get('big/object');
      const received = createHash('sha256');
      for await (const chunk of got.body) received.update(chunk as Buffer);
      expect({ size: got.size, received: received.digest('hex') }).toEqual({ size, received: expected });
    } finally {
      store.client.destroy();
    }
  });
});
