import { ownerScope, type Stores, systemScope, UnavailableError } from '@trellis/core';
import { MemoryUnitOfWork } from '@trellis/testkit/memory';
import { beforeEach, describe, expect, it } from 'vitest';
import { at, jobRecord, OWNER_A, OWNER_B, vineRecord } from './records.js';

let uow: MemoryUnitOfWork;
beforeEach(() => {
  uow = new MemoryUnitOfWork();
});

describe('MemoryUnitOfWork', () => {
  it('commits what a unit of work wrote', async () => {
    const vine = vineRecord();
    await uow.run(systemScope, (s) => s.vines.create(vine));
    expect(uow.snapshot().vines.get(vine.id)).toEqual(vine);
    expect(uow.stats).toEqual({ committed: 1, rolledBack: 0 });
  });

  it('rolls back every change of a unit of work that throws', async () => {
    const kept = vineRecord();
    await uow.run(systemScope, (s) => s.vines.create(kept));
    const before = uow.snapshot();
    await expect(
      uow.run(systemScope, async (s) => {
        await s.vines.create(vineRecord());
        await s.vines.updateStatus(OWNER_A, kept.id, 'FAILED', 'x', at(1));
        await s.jobs.create(jobRecord());
        await s.releases.create({ version: '1.0.0', release_notes: '', published_at: at(1) });
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(uow.snapshot()).toEqual(before);
    expect(uow.stats.rolledBack).toBe(1);
  });

  it('runs units of work one at a time', async () => {
    const order: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const first = uow.run(systemScope, async () => {
      order.push('first:start');
      await gate;
      order.push('first:end');
    });
    const second = uow.run(systemScope, async () => {
      order.push('second');
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(order).toEqual(['first:start']);
    release();
    await Promise.all([first, second]);
    expect(order).toEqual(['first:start', 'first:end', 'second']);
  });

  it('keeps going after a failed unit of work', async () => {
    await expect(uow.run(systemScope, async () => Promise.reject(new Error('x')))).rejects.toThrow('x');
    await expect(uow.run(systemScope, async () => 42)).resolves.toBe(42);
  });

  it('does not show a unit’s writes to the outside before it commits', async () => {
    const vine = vineRecord();
    await uow.run(systemScope, async (s) => {
      await s.vines.create(vine);
      expect(uow.snapshot().vines.has(vine.id)).toBe(false);
    });
    expect(uow.snapshot().vines.has(vine.id)).toBe(true);
  });

  it('refuses a unit of work started inside another (it would deadlock on a database)', async () => {
    await expect(uow.run(systemScope, () => uow.run(systemScope, async () => 1))).rejects.toThrow(/inside another/);
  });

  it('lets work a finished unit left behind start a unit of its own', async () => {
    let later: Promise<number> | undefined;
    await uow.run(systemScope, async () => {
      later = new Promise<void>((resolve) => setTimeout(resolve, 5)).then(() => uow.run(systemScope, async () => 7));
    });
    await expect(later).resolves.toBe(7);
  });

  it('refuses stores used after their unit of work ended', async () => {
    let leaked: Stores | undefined;
    await uow.run(systemScope, async (s) => {
      leaked = s;
    });
    await expect(leaked!.vines.list(OWNER_A)).rejects.toThrow(/after its unit of work ended/);
  });

  it('can be made unavailable, for run and for check', async () => {
    await expect(uow.check()).resolves.toBeUndefined();
    uow.setUnavailable();
    await expect(uow.check()).rejects.toBeInstanceOf(UnavailableError);
    await expect(uow.run(systemScope, async () => 1)).rejects.toBeInstanceOf(UnavailableError);
    uow.setUnavailable(false);
    await expect(uow.check()).resolves.toBeUndefined();
    await expect(uow.run(systemScope, async () => 1)).resolves.toBe(1);
  });

  it('passes the stores through wrapStores, which may inject a failure', async () => {
    const scopes: string[] = [];
    uow.wrapStores = (stores, scope) => {
      scopes.push(scope.kind);
      return {
        ...stores,
        jobs: {
          ...stores.jobs,
          create: async () => {
            throw new Error('injected');
          },
        },
      };
    };
    const vine = vineRecord();
    await expect(
      uow.run(ownerScope(OWNER_A), async (s) => {
        await s.vines.create(vine);
        await s.jobs.create(jobRecord());
      }),
    ).rejects.toThrow('injected');
    expect(scopes).toEqual(['owner']);
    expect(uow.snapshot().vines.has(vine.id)).toBe(false);
  });

  it('owner scope hides other owners and refuses writes for them', async () => {
    const theirs = vineRecord({ owner_id: OWNER_B });
    await uow.run(systemScope, (s) => s.vines.create(theirs));
    await uow.run(ownerScope(OWNER_A), async (s) => {
      expect(await s.vines.get(OWNER_B, theirs.id)).toBeNull();
      expect(await s.vines.list(OWNER_B)).toEqual([]);
    });
    await expect(
      uow.run(ownerScope(OWNER_A), (s) => s.vines.create(vineRecord({ owner_id: OWNER_B }))),
    ).rejects.toThrow(/row-level security/);
    await expect(uow.run(ownerScope(OWNER_B), (s) => s.vines.get(OWNER_B, theirs.id))).resolves.toEqual(theirs);
  });

  it('modify changes committed state directly, for what no use case does', async () => {
    const vine = vineRecord();
    await uow.run(systemScope, (s) => s.vines.create(vine));
    await uow.modify((state) => {
      state.vines.get(vine.id)!.variables = { x: { value: '1', sensitive: false } };
    });
    expect((await uow.run(systemScope, (s) => s.vines.get(OWNER_A, vine.id)))?.variables).toEqual({
      x: { value: '1', sensitive: false },
    });
  });

  it('snapshot is a copy', async () => {
    const vine = vineRecord();
    await uow.run(systemScope, (s) => s.vines.create(vine));
    uow.snapshot().vines.delete(vine.id);
    expect(uow.snapshot().vines.has(vine.id)).toBe(true);
  });
});
