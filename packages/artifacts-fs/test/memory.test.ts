import { createHash, randomFillSync } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openFsArtifactStore } from '@trellis/artifacts-fs';
import { afterEach, expect, it } from 'vitest';

const MiB = 1024 * 1024;
let dir: string | undefined;

afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

// In a file of its own, so the worker's RSS is not inflated by other tests' data.
it('a 200 MiB streamed put grows RSS by no more than 64 MiB', async () => {
  dir = await mkdtemp(join(tmpdir(), 'trellis-artifacts-memory-'));
  const store = await openFsArtifactStore(dir);
  const size = 200 * MiB;
  const chunkSize = 64 * 1024;
  // A small ring of reused buffers: the producer makes no garbage of its own, so RSS reflects what
  // the store keeps. A store that held on to a chunk after pulling the next would also store
  // overwritten bytes, which the digest comparison below catches.
  const ring = Array.from({ length: 4 }, () => Buffer.alloc(chunkSize));
  const sent = createHash('sha256');
  const baseline = process.memoryUsage.rss();
  let peak = baseline;
  async function* body(): AsyncGenerator<Uint8Array> {
    for (let i = 0; i < size / chunkSize; i += 1) {
      const chunk = randomFillSync(ring[i % ring.length]!);
      sent.update(chunk);
      if (i % 16 === 0) peak = Math.max(peak, process.memoryUsage.rss());
      yield chunk;
    }
  }

  const stored = await store.put('big/object', body(), { maxBytes: size });
  peak = Math.max(peak, process.memoryUsage.rss());

  const expectedSha256 = sent.digest('hex');
  expect(stored).toEqual({ size, sha256: expectedSha256 });
  expect(peak - baseline, `RSS grew by ${((peak - baseline) / MiB).toFixed(1)} MiB`).toBeLessThanOrEqual(64 * MiB);

  const got = await store.get('big/object');
  const received = createHash('sha256');
  for await (const chunk of got.body) received.update(chunk as Buffer);
  expect(received.digest('hex')).toBe(expectedSha256);
});
