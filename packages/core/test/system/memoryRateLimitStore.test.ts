import { MemoryRateLimitStore } from '@trellis/core';
import { describeRateLimitStoreConformance } from '@trellis/testkit/memory';
import { expect, it } from 'vitest';

describeRateLimitStoreConformance('memory', async () => ({ store: new MemoryRateLimitStore(), close: async () => {} }));

it('sweeps ended windows once it holds many keys, so random keys cannot fill memory', async () => {
  const store = new MemoryRateLimitStore(3);
  const at = new Date('2026-01-01T00:00:00Z');
  for (const key of ['a', 'b', 'c']) await store.hit(key, at, 1);
  const later = new Date(at.getTime() + 2000);
  await store.hit('d', later, 1);
  expect(await store.get('a', at)).toBeNull();
  expect(await store.get('d', later)).toEqual({ hits: 1, resetsAt: new Date(later.getTime() + 1000) });
});
