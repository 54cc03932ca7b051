import type { RateLimitStore } from '@trellis/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

export interface RateLimitStoreHarness {
  store: RateLimitStore;
  close(): Promise<void>;
}

const AT = new Date('2026-01-01T00:00:00Z');
const plus = (seconds: number) => new Date(AT.getTime() + seconds * 1000);

/**
 * The behaviour every `RateLimitStore` (memory, SQL) must show. `open` is called before each test
 * and must return an empty store of its own.
 */
export function describeRateLimitStoreConformance(name: string, open: () => Promise<RateLimitStoreHarness>): void {
  describe(`RateLimitStore conformance: ${name}`, () => {
    let harness: RateLimitStoreHarness | undefined;
    let store: RateLimitStore;
    beforeEach(async () => {
      harness = await open();
      store = harness.store;
    });
    afterEach(async () => {
      await harness?.close();
      harness = undefined;
    });

    it('counts hits in a fixed window that starts at the first hit', async () => {
      expect(await store.get('k', AT)).toBeNull();
      expect(await store.hit('k', AT, 60)).toEqual({ hits: 1, resetsAt: plus(60) });
      expect(await store.hit('k', plus(10), 60)).toEqual({ hits: 2, resetsAt: plus(60) });
      expect(await store.get('k', plus(59))).toEqual({ hits: 2, resetsAt: plus(60) });
    });

    it('starts a new window once the last has ended', async () => {
      await store.hit('k', AT, 60);
      await store.hit('k', AT, 60);
      expect(await store.get('k', plus(60))).toBeNull();
      expect(await store.hit('k', plus(60), 30)).toEqual({ hits: 1, resetsAt: plus(90) });
    });

    it('keeps keys apart', async () => {
      await store.hit('a', AT, 60);
      expect(await store.hit('b', plus(1), 60)).toEqual({ hits: 1, resetsAt: plus(61) });
      expect(await store.get('a', plus(1))).toEqual({ hits: 1, resetsAt: plus(60) });
    });

    it('takes hits back, never below zero, and forgets a key on reset', async () => {
      await store.hit('k', AT, 60);
      await store.hit('k', AT, 60);
      await store.undo('k', plus(1));
      expect(await store.get('k', plus(1))).toEqual({ hits: 1, resetsAt: plus(60) });
      await store.undo('k', plus(1));
      await store.undo('k', plus(1));
      expect(await store.get('k', plus(1))).toEqual({ hits: 0, resetsAt: plus(60) });
      await store.undo('missing', plus(1));
      expect(await store.get('missing', plus(1))).toBeNull();
      await store.reset('k');
      expect(await store.get('k', plus(1))).toBeNull();
    });

    it('counts every one of many concurrent hits', async () => {
      await Promise.all(Array.from({ length: 25 }, () => store.hit('busy', AT, 60)));
      expect(await store.get('busy', AT)).toEqual({ hits: 25, resetsAt: plus(60) });
    });
  });
}
