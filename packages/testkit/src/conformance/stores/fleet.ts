import {
  type DriftResult,
  type FleetFilter,
  type FleetVine,
  memberScope,
  ownerScope,
  type PageKey,
  type Vine,
} from '@trellis/core';
import { describe, expect, it } from 'vitest';
import { at, newUser, newVine, newVineyard } from './fixtures.js';
import { type OpenStoreHarness, useStoreSuite } from './harness.js';
import { newMember, newOrg } from './orgs.js';

function drift(status: DriftResult['status']): DriftResult {
  return { status, checked_at: at(5), job_id: '00000000-0000-4000-8000-000000000001', changes: null };
}

/** The fleet's query of `VineStore` (issue 29): filters, counts, pages across owners. */
export function describeFleetConformance(open: OpenStoreHarness): void {
  describe('VineStore: the fleet', () => {
    const suite = useStoreSuite(open);

    it("filters the owners' vines by status, drift, policy, tag and last change; counts each dimension under the others; pages with one cursor", async () => {
      const user = await suite.asSystem((stores) => stores.users.create(newUser()));
      const stranger = await suite.asSystem((stores) => stores.users.create(newUser()));
      const org = newOrg();
      await suite.uow.run(ownerScope(org.id), async (stores) => {
        await stores.orgs.create(org);
        await stores.orgs.addMember(newMember(org.id, { user }, 'viewer'));
      });
      // name: owner, status, drift, policy, tags, created (s), updated (s)
      const rows: [
        string,
        string,
        Vine['status'],
        DriftResult['status'] | null,
        'passed' | 'failed' | null,
        string[],
        number,
        number,
      ][] = [
        ['a', user.id, 'DEPLOYED', 'drifted', 'passed', ['prod', 'web'], 10, 100],
        ['b', org.id, 'DEPLOYED', 'in_sync', 'failed', ['prod'], 20, 200],
        ['c', user.id, 'FAILED', null, null, [], 30, 300],
        ['d', org.id, 'FAILED', 'drifted', 'failed', ['web'], 40, 400],
        ['e', org.id, 'NEW', 'unknown', null, ['prod'], 50, 500],
        ['f', user.id, 'DEPLOYED', 'drifted', 'failed', ['prod'], 60, 600],
        ['g', stranger.id, 'DEPLOYED', 'drifted', 'failed', ['prod'], 70, 700],
      ];
      for (const [name, owner, status, driftStatus, policy, tags, created, updated] of rows) {
        await suite.asOwner(owner, async (stores) => {
          const vineyard = await stores.vineyards.create(newVineyard(owner, { name: `yard-${name}` }));
          const vine = await stores.vines.create(
            newVine(owner, vineyard.id, {
              name,
              project_name: name,
              status,
              tags,
              created_at: at(created),
              updated_at: at(updated),
            }),
          );
          if (driftStatus !== null) await stores.vines.recordDrift(owner, vine.id, drift(driftStatus));
          if (policy !== null) await stores.vines.recordPlanPolicy(owner, vine.id, policy);
        });
      }
      const scope = memberScope(user.id, [org.id]);
      const owners = [user.id, org.id];
      const names = async (filter: FleetFilter, limit = 50): Promise<string[]> => {
        const seen: FleetVine[] = [];
        let after: PageKey | undefined;
        for (let pages = 0; pages < 20; pages++) {
          const page = await suite.uow.read(scope, (stores) =>
            stores.vines.fleetPage(owners, filter, after === undefined ? { limit } : { limit, after }),
          );
          expect(page.items.length).toBeLessThanOrEqual(limit);
          seen.push(...page.items);
          if (page.next === null) break;
          after = page.next;
        }
        return seen.map((vine) => vine.name);
      };
      // Newest first, the stranger's never; one cursor across the two owners.
      expect(await names({})).toEqual(['f', 'e', 'd', 'c', 'b', 'a']);
      expect(await names({}, 2)).toEqual(['f', 'e', 'd', 'c', 'b', 'a']);
      expect(await names({ status: 'DEPLOYED' })).toEqual(['f', 'b', 'a']);
      expect(await names({ drift: 'drifted' })).toEqual(['f', 'd', 'a']);
      expect(await names({ drift: 'never_checked' })).toEqual(['c']);
      expect(await names({ drift: 'unknown' })).toEqual(['e']);
      expect(await names({ policy: 'failed' })).toEqual(['f', 'd', 'b']);
      expect(await names({ policy: 'none' })).toEqual(['e', 'c']);
      expect(await names({ tag: 'prod' })).toEqual(['f', 'e', 'b', 'a']);
      expect(await names({ tag: 'pro' })).toEqual([]);
      expect(await names({ changed_since: at(300), changed_before: at(600) })).toEqual(['e', 'd', 'c']);
      expect(await names({ status: 'DEPLOYED', drift: 'drifted', policy: 'failed', tag: 'prod' }, 1)).toEqual(['f']);
      // Each vine comes with its latest plan's policy result.
      const [first] = (await suite.uow.read(scope, (stores) => stores.vines.fleetPage(owners, {}, { limit: 1 }))).items;
      expect(first).toMatchObject({ name: 'f', policy: 'failed', tags: ['prod'], drift: { status: 'drifted' } });

      const counts = await suite.uow.read(scope, (stores) =>
        stores.vines.fleetCounts(owners, { status: 'DEPLOYED', tag: 'prod' }),
      );
      // status: under tag=prod only (a, b, e, f); drift and policy: under DEPLOYED + prod (a, b, f).
      expect(counts).toEqual({
        total: 3,
        status: { NEW: 1, PLANNING: 0, PLANNED: 0, DEPLOYING: 0, DEPLOYED: 3, DESTROYING: 0, DESTROYED: 0, FAILED: 0 },
        drift: { drifted: 2, in_sync: 1, unknown: 0, never_checked: 0 },
        policy: { passed: 1, failed: 2, none: 0 },
      });
      const all = await suite.uow.read(scope, (stores) => stores.vines.fleetCounts(owners, {}));
      expect(all.total).toBe(6);
      expect(all.policy).toEqual({ passed: 1, failed: 3, none: 2 });
      expect(all.drift).toEqual({ drifted: 3, in_sync: 1, unknown: 1, never_checked: 1 });

      // A plan with no policy forgets the result; a deleted vine is gone from the fleet.
      const f = (await suite.uow.read(scope, (stores) => stores.vines.fleetPage(owners, { tag: 'prod' }, { limit: 1 })))
        .items[0] as FleetVine;
      await suite.asOwner(user.id, (stores) => stores.vines.recordPlanPolicy(user.id, f.id, 'none'));
      expect(await names({ policy: 'none' })).toEqual(['f', 'e', 'c']);
      await suite.asOwner(user.id, (stores) => stores.vines.markDeleted(user.id, f.id, at(900), null));
      expect(await names({ tag: 'prod' })).toEqual(['e', 'b', 'a']);
      expect((await suite.uow.read(scope, (stores) => stores.vines.fleetCounts(owners, {}))).total).toBe(5);
      // Another owner's vine is out of reach even when asked for by owner.
      expect(
        (await suite.asOwner(stranger.id, (stores) => stores.vines.fleetCounts(stranger.id, {}))).status.DEPLOYED,
      ).toBe(1);
      expect(await suite.uow.read(scope, (stores) => stores.vines.fleetPage([stranger.id], {}, { limit: 5 }))).toEqual({
        items: [],
        next: null,
      });
    });
  });
}
