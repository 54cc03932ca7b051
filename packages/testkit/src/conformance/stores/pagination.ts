import { memberScope, ownerScope, type Page, type PageKey, type PageRequest, type Stores } from '@trellis/core';
import { newMember, newOrg } from './orgs.js';
import { describe, expect, it } from 'vitest';
import { at, newJob, newRelease, newUser, newVine, newVineyard, newWorker } from './fixtures.js';
import { type StoreSuite, useStoreSuite, type OpenStoreHarness } from './harness.js';

/**
 * Reads every page, `limit` at a time, from the newest; `between` runs after each page (to add
 * records while the walk goes on). Returns what it read, in order.
 */
async function walk<T>(
  read: (request: PageRequest) => Promise<Page<T>>,
  limit: number,
  between: () => Promise<void> = async () => {},
): Promise<T[]> {
  const seen: T[] = [];
  let after: PageKey | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const page = await read(after === undefined ? { limit } : { limit, after });
    expect(page.items.length).toBeLessThanOrEqual(limit);
    seen.push(...page.items);
    if (page.next === null) return seen;
    expect(page.items).toHaveLength(limit);
    after = page.next;
    await between();
  }
  throw new Error('the pages never ended');
}

/** Issue 10 §2: every list pages newest first, by time then insertion, each record exactly once. */
export function describePaginationConformance(open: OpenStoreHarness): void {
  describe('pagination of lists', () => {
    const suite = useStoreSuite(open);

    const twoOwners = (s: StoreSuite) =>
      s.asSystem(
        async (stores) => [await stores.users.create(newUser()), await stores.users.create(newUser())] as const,
      );

    // Times out of insertion order, with ties, so neither time nor insertion alone gives the order.
    const TIMES = [30, 10, 20, 20, 40, 20, 10];

    it('pages vineyards newest first, ties by insertion, every one once, even as new ones arrive', async () => {
      const [a, b] = await twoOwners(suite);
      const names = await suite.asOwner(a.id, async (stores) => {
        for (const [i, seconds] of TIMES.entries()) {
          await stores.vineyards.create(newVineyard(a.id, { name: `v${i}`, created_at: at(seconds) }));
        }
        return TIMES.map((_, i) => `v${i}`);
      });
      let added = 0;
      const seen = await walk(
        (request) => suite.asOwner(a.id, (stores) => stores.vineyards.page(a.id, request)),
        2,
        () =>
          suite.asOwner(a.id, async (stores) => {
            await stores.vineyards.create(newVineyard(a.id, { name: `new${added++}`, created_at: at(100 + added) }));
          }),
      );
      expect(seen.map((v) => v.name)).toEqual(newestFirst(names));
      const first = await suite.asOwner(a.id, (stores) => stores.vineyards.page(a.id, { limit: 200 }));
      expect(first.next).toBeNull();
      expect(first.items).toHaveLength(TIMES.length + added);
      expect(await suite.asOwner(b.id, (stores) => stores.vineyards.page(b.id, { limit: 50 }))).toEqual({
        items: [],
        next: null,
      });
    });

    it("pages a member's own records and an organization's together, newest first, with one cursor", async () => {
      const [a, b] = await twoOwners(suite);
      const org = newOrg();
      await suite.uow.run(ownerScope(org.id), async (stores) => {
        await stores.orgs.create(org);
        await stores.orgs.addMember(newMember(org.id, { user: a }, 'viewer'));
      });
      // Alternating owners, out of insertion order, with ties across owners.
      const expected: string[] = [];
      const jobIds: string[] = [];
      for (const [i, seconds] of TIMES.entries()) {
        const owner = i % 2 === 0 ? a.id : org.id;
        const name = `v${i}`;
        const vineyard = await suite.asOwner(owner, (stores) =>
          stores.vineyards.create(newVineyard(owner, { name, created_at: at(seconds) })),
        );
        await suite.asOwner(owner, (stores) =>
          stores.workers.create(newWorker(owner, { name, created_at: at(seconds) })),
        );
        // Vines and jobs are read one owner at a time and merged (issue 17): the same order.
        const vine = await suite.asOwner(owner, (stores) =>
          stores.vines.create(newVine(owner, vineyard.id, { name, project_name: name, created_at: at(seconds) })),
        );
        const job = await suite.asOwner(owner, (stores) =>
          stores.jobs.create(newJob(owner, vine, { created_at: at(seconds) })),
        );
        expected.push(name);
        jobIds.push(job.id);
      }
      await suite.asOwner(b.id, (stores) =>
        stores.vineyards.create(newVineyard(b.id, { name: 'other', created_at: at(50) })),
      );
      const scope = memberScope(a.id, [org.id]);
      const owners = [a.id, org.id];
      const vineyards = await walk(
        (request) => suite.uow.read(scope, (stores) => stores.vineyards.page(owners, request)),
        2,
      );
      expect(vineyards.map((v) => v.name)).toEqual(newestFirst(expected));
      const workers = await walk(
        (request) => suite.uow.read(scope, (stores) => stores.workers.page(owners, request)),
        3,
      );
      expect(workers.map((w) => w.name)).toEqual(newestFirst(expected));
      const vines = await walk((request) => suite.uow.read(scope, (stores) => stores.vines.page(owners, request)), 2);
      expect(vines.map((v) => v.name)).toEqual(newestFirst(expected));
      for (const limit of [1, 3, 50]) {
        const jobs = await walk(
          (request) => suite.uow.read(scope, (stores) => stores.jobs.page(owners, request)),
          limit,
        );
        expect(jobs.map((job) => job.id)).toEqual(newestFirst(jobIds));
      }
      const onlyOrg = await suite.uow.read(scope, (stores) => stores.vineyards.page([org.id], { limit: 50 }));
      expect(onlyOrg.items.map((v) => v.owner_id)).toEqual(expected.filter((_, i) => i % 2 === 1).map(() => org.id));
    });

    it('pages vines and workers the same way, each owner seeing only its own', async () => {
      const [a, b] = await twoOwners(suite);
      const vineyard = await suite.asOwner(a.id, (stores) => stores.vineyards.create(newVineyard(a.id)));
      await suite.asOwner(a.id, async (stores) => {
        for (const [i, seconds] of TIMES.entries()) {
          await stores.vines.create(
            newVine(a.id, vineyard.id, { name: `v${i}`, project_name: `p${i}`, created_at: at(seconds) }),
          );
          await stores.workers.create(newWorker(a.id, { name: `w${i}`, created_at: at(seconds) }));
        }
      });
      const vines = await walk((request) => suite.asOwner(a.id, (stores) => stores.vines.page(a.id, request)), 3);
      expect(vines.map((v) => v.name)).toEqual(newestFirst(TIMES.map((_, i) => `v${i}`)));
      const workers = await walk((request) => suite.asOwner(a.id, (stores) => stores.workers.page(a.id, request)), 1);
      expect(workers.map((w) => w.name)).toEqual(newestFirst(TIMES.map((_, i) => `w${i}`)));
      expect((await suite.asOwner(b.id, (stores) => stores.vines.page(b.id, { limit: 5 }))).items).toEqual([]);
      expect((await suite.asOwner(b.id, (stores) => stores.workers.page(b.id, { limit: 5 }))).items).toEqual([]);
      const inVineyard = await suite.asOwner(a.id, (stores) =>
        stores.vines.list(a.id, { vineyard_ids: [vineyard.id] }),
      );
      expect(inVineyard).toHaveLength(TIMES.length);
      expect(await suite.asOwner(a.id, (stores) => stores.vines.list(a.id, { vineyard_ids: [] }))).toEqual([]);
    });

    it('pages jobs within their filters, every job once while jobs keep arriving', async () => {
      const [a, b] = await twoOwners(suite);
      const [vineyard, other] = await suite.asOwner(a.id, async (stores) => [
        await stores.vineyards.create(newVineyard(a.id)),
        await stores.vineyards.create(newVineyard(a.id)),
      ]);
      const vine = await suite.asOwner(a.id, (stores) => stores.vines.create(newVine(a.id, vineyard.id)));
      const otherVine = await suite.asOwner(a.id, (stores) => stores.vines.create(newVine(a.id, other.id)));
      const ids = await suite.asOwner(a.id, async (stores) => {
        const created: string[] = [];
        for (const seconds of TIMES) {
          created.push((await stores.jobs.create(newJob(a.id, vine, { created_at: at(seconds) }))).id);
          await stores.jobs.create(newJob(a.id, otherVine, { created_at: at(seconds), status: 'FAILED' }));
        }
        return created;
      });
      const arrive = (stores: Stores) => stores.jobs.create(newJob(a.id, vine, { created_at: at(1000) }));
      const seen = await walk(
        (request) => suite.asOwner(a.id, (stores) => stores.jobs.page(a.id, request, { vineyard_id: vineyard.id })),
        2,
        () => suite.asOwner(a.id, async (stores) => void (await arrive(stores))),
      );
      expect(seen.map((job) => job.id)).toEqual(newestFirst(ids));
      const failed = await walk(
        (request) => suite.asOwner(a.id, (stores) => stores.jobs.page(a.id, request, { status: 'FAILED' })),
        4,
      );
      expect(failed).toHaveLength(TIMES.length);
      expect(failed.every((job) => job.vine_id === otherVine.id)).toBe(true);
      const ofVine = await walk(
        (request) => suite.asOwner(a.id, (stores) => stores.jobs.page(a.id, request, { vine_id: otherVine.id })),
        200,
      );
      expect(ofVine).toHaveLength(TIMES.length);
      expect((await suite.asOwner(b.id, (stores) => stores.jobs.page(b.id, { limit: 200 }))).items).toEqual([]);
    });

    it('pages jobs as summaries: no inline files, no variables; get keeps the whole snapshot', async () => {
      const [a] = await twoOwners(suite);
      const vineyard = await suite.asOwner(a.id, (stores) => stores.vineyards.create(newVineyard(a.id)));
      const vine = newVine(a.id, vineyard.id, {
        source: { type: 'inline', files: { 'main.tf': '# big\n', 'vars.tf': '# vars\n' } },
        variables: { token: { value: 'hunter2', sensitive: true } },
      });
      const job = await suite.asOwner(a.id, async (stores) => {
        await stores.vines.create(vine);
        return stores.jobs.create(newJob(a.id, vine));
      });
      const page = await suite.asOwner(a.id, (stores) => stores.jobs.page(a.id, { limit: 10 }));
      expect(page.items.map((item) => item.id)).toEqual([job.id]);
      expect(page.items[0]?.config_snapshot.source).toEqual({ type: 'inline', file_count: 2 });
      expect(page.items[0]?.config_snapshot).not.toHaveProperty('variables');
      expect(JSON.stringify(page)).not.toContain('hunter2');
      const read = await suite.asOwner(a.id, (stores) => stores.jobs.get(a.id, job.id));
      expect(read?.config_snapshot).toEqual(job.config_snapshot);
      expect(read?.config_snapshot.variables.token?.value).toBe('hunter2');
    });

    it('pages releases newest first', async () => {
      await suite.asSystem(async (stores) => {
        for (const [i, seconds] of TIMES.entries()) {
          await stores.releases.create(newRelease(`1.0.${i}`, { published_at: at(seconds) }));
        }
      });
      const seen = await walk((request) => suite.asSystem((stores) => stores.releases.page(request)), 2);
      expect(seen.map((release) => release.version)).toEqual(newestFirst(TIMES.map((_, i) => `1.0.${i}`)));
    });

    /** The order a correct store gives records created with TIMES in insertion order. */
    function newestFirst<T>(inserted: T[]): T[] {
      return inserted
        .map((item, seq) => ({ item, seq, time: TIMES[seq] ?? 0 }))
        .sort((x, y) => y.time - x.time || y.seq - x.seq)
        .map((entry) => entry.item);
    }
  });
}
