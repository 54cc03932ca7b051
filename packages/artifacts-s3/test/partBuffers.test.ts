import { describe, expect, it } from 'vitest';
import { PartBufferPool, UploadBuffers } from '../src/partBuffers.js';

const PART = 1024 * 1024;

/** Fills `part` to the brim from a chunk of the right size, growing a first part as `put` does. */
async function fillUp(buffers: UploadBuffers, part: ReturnType<UploadBuffers['first']>): Promise<void> {
  const chunk = Buffer.alloc(PART, 1);
  let offset = 0;
  while (!part.full) {
    if (part.cramped) await buffers.grow(part);
    offset += part.fill(chunk, offset);
  }
}

describe('part buffers', () => {
  it('keep a small body in a small first buffer, outside the pool', () => {
    const pool = new PartBufferPool(PART, 1);
    const buffers = new UploadBuffers(pool, 1);
    const part = buffers.first();
    expect(part.fill(Buffer.alloc(1000, 7), 0)).toBe(1000);
    expect(part.bytes()).toEqual(Buffer.alloc(1000, 7));
    expect(part.buffer.length).toBeLessThan(PART);
    buffers.close();
    expect(pool.tryAcquire()).toBeDefined();
  });

  it('give a grown first part back to the pool when the upload ends without sending it (one PutObject)', async () => {
    const pool = new PartBufferPool(PART, 1);
    const first = new UploadBuffers(pool, 1);
    const part = first.first();
    await fillUp(first, part);
    expect(part.buffer.length).toBe(PART);
    expect(pool.tryAcquire(), 'the only buffer is in use').toBeUndefined();
    first.close();
    const second = new UploadBuffers(pool, 1);
    const next = second.first();
    await fillUp(second, next); // would wait forever had the first upload kept its buffer
    second.close();
  });

  it('never hold more than the pool: uploads past it wait for a buffer, then all finish', async () => {
    const pool = new PartBufferPool(PART, 2);
    let live = 0;
    let most = 0;
    const parts: Promise<void>[] = [];
    async function upload(partsToSend: number, queueSize: number) {
      const buffers = new UploadBuffers(pool, queueSize);
      let part = buffers.first();
      for (let n = 0; n < partsToSend; n += 1) {
        await fillUp(buffers, part);
        const done = buffers.sending(part);
        live += 1;
        most = Math.max(most, live);
        // S3 acknowledges the part a little later.
        parts.push(
          new Promise<void>((resolve) =>
            setTimeout(() => {
              live -= 1;
              done();
              resolve();
            }, 5),
          ),
        );
        part = await buffers.next();
      }
      buffers.close();
    }
    await Promise.all([upload(4, 1), upload(3, 2), upload(5, 2), upload(2, 1), upload(3, 1)]);
    await Promise.all(parts);
    expect(most).toBeLessThanOrEqual(2);
    // Every buffer is back: both can be taken again.
    expect([pool.tryAcquire(), pool.tryAcquire(), pool.tryAcquire()].filter(Boolean)).toHaveLength(2);
  });
});
