import { createHash } from 'node:crypto';
import { NotFoundError, TooLargeError, type TrellisEvent, UnavailableError } from '@trellis/core';
import { bodyOf, MemoryArtifactStore, MemoryEventBus, readAll } from '@trellis/testkit/memory';
import { describe, expect, it } from 'vitest';

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

describe('MemoryArtifactStore', () => {
  it('stores a streamed body with its size and sha256, and gives it back', async () => {
    const store = new MemoryArtifactStore();
    const data = Buffer.from('plan bytes '.repeat(1000));
    expect(await store.put('k', bodyOf(data, 100), { maxBytes: data.length })).toEqual({
      size: data.length,
      sha256: sha256(data),
    });
    const got = await store.get('k');
    expect(got.size).toBe(data.length);
    expect(await readAll(got.body)).toEqual(data);
  });

  it('stops at the first chunk past the limit and keeps the earlier object', async () => {
    const store = new MemoryArtifactStore();
    await store.put('k', bodyOf('old'), { maxBytes: 10 });
    let produced = 0;
    async function* endless() {
      for (;;) {
        produced += 1;
        yield Buffer.alloc(4);
      }
    }
    const error = await store.put('k', endless(), { maxBytes: 10 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TooLargeError);
    expect(error).toMatchObject({ code: 'artifact_too_large', limitBytes: 10 });
    expect(produced).toBe(3);
    expect(store.lastPutChunksRead).toBe(3);
    expect(store.bytesOf('k')?.toString()).toBe('old');
    await expect(store.put('new', bodyOf('x'.repeat(11)), { maxBytes: 10 })).rejects.toBeInstanceOf(TooLargeError);
    expect(store.keys()).toEqual(['k']);
  });

  it('accepts a body of exactly the limit', async () => {
    const store = new MemoryArtifactStore();
    await expect(store.put('k', bodyOf('x'.repeat(10), 3), { maxBytes: 10 })).resolves.toMatchObject({ size: 10 });
  });

  it('a missing key is NotFoundError; delete removes; outage is UnavailableError everywhere', async () => {
    const store = new MemoryArtifactStore();
    await expect(store.get('nope')).rejects.toBeInstanceOf(NotFoundError);
    await store.put('k', bodyOf('x'), { maxBytes: 10 });
    await store.delete('k');
    await expect(store.get('k')).rejects.toMatchObject({ code: 'artifact_not_found' });
    await store.delete('k');
    store.unavailable = true;
    await expect(store.check()).rejects.toBeInstanceOf(UnavailableError);
    await expect(store.put('k', bodyOf('x'), { maxBytes: 10 })).rejects.toBeInstanceOf(UnavailableError);
    await expect(store.get('k')).rejects.toBeInstanceOf(UnavailableError);
    await expect(store.delete('k')).rejects.toBeInstanceOf(UnavailableError);
    store.unavailable = false;
    await expect(store.check()).resolves.toBeUndefined();
  });

  it('keeps its own copy of the bytes', async () => {
    const store = new MemoryArtifactStore();
    const data = Buffer.from('abc');
    await store.put('k', bodyOf(data), { maxBytes: 10 });
    data.write('zzz');
    const got = await readAll((await store.get('k')).body);
    got.write('yyy');
    expect(store.bytesOf('k')?.toString()).toBe('abc');
  });
});

describe('MemoryEventBus', () => {
  const event: TrellisEvent = { type: 'job_queued', owner_id: 'o', job_id: 'j' };

  it('delivers to every subscriber synchronously and records what was published', async () => {
    const bus = new MemoryEventBus();
    const a: TrellisEvent[] = [];
    const b: TrellisEvent[] = [];
    bus.subscribe((e) => a.push(e));
    const stop = bus.subscribe((e) => b.push(e));
    const publishing = bus.publish(event);
    expect(a).toEqual([event]);
    await publishing;
    stop();
    await bus.publish({ type: 'log_appended', owner_id: 'o', job_id: 'j', chunk_id: 1 });
    expect(a).toHaveLength(2);
    expect(b).toHaveLength(1);
    expect(bus.published.map((e) => e.type)).toEqual(['job_queued', 'log_appended']);
    expect(bus.ofType('log_appended')).toEqual([{ type: 'log_appended', owner_id: 'o', job_id: 'j', chunk_id: 1 }]);
  });

  it('a throwing listener does not stop the others or the publisher', async () => {
    const bus = new MemoryEventBus();
    const seen: TrellisEvent[] = [];
    bus.subscribe(() => {
      throw new Error('listener');
    });
    bus.subscribe((e) => seen.push(e));
    await expect(bus.publish(event)).resolves.toBeUndefined();
    expect(seen).toHaveLength(1);
    expect(bus.listenerErrors).toHaveLength(1);
  });

  it('can be made to fail', async () => {
    const bus = new MemoryEventBus();
    bus.failing = true;
    await expect(bus.publish(event)).rejects.toBeInstanceOf(UnavailableError);
    expect(bus.published).toEqual([]);
  });
});
