import type { TfeRun } from '@trellis/core';
import { describe, expect, it } from 'vitest';
import { at, newJob, uuid } from './fixtures.js';
import { expectConflict, type OpenStoreHarness, type SeededOwner, type StoreSuite, useStoreSuite } from './harness.js';

export function newTfeRun(owner: SeededOwner, planJobId: string, overrides: Partial<TfeRun> = {}): TfeRun {
  return {
    plan_job_id: planJobId,
    owner_id: owner.id,
    vine_id: owner.vine.id,
    configuration_version_id: uuid(),
    message: 'Queued by the tofu CLI',
    is_destroy: false,
    auto_apply: false,
    plan_only: false,
    save_plan: false,
    refresh: true,
    refresh_only: false,
    target_addrs: ['aws_instance.web', 'module.a["x"].b'],
    replace_addrs: [],
    variable_keys: ['region'],
    confirmed_at: null,
    confirmed_by: null,
    apply_job_id: null,
    discarded_at: null,
    discarded_by: null,
    created_by: owner.id,
    created_at: at(1),
    ...overrides,
  };
}

async function planJob(suite: StoreSuite, owner: SeededOwner, seconds = 1): Promise<string> {
  const job = await suite.asOwner(owner.id, (stores) =>
    stores.jobs.create(newJob(owner.id, owner.vine, { created_at: at(seconds) })),
  );
  return job.id;
}

export function describeTfeRunStoreConformance(open: OpenStoreHarness): void {
  describe('TfeRunStore (issue 27)', () => {
    const suite = useStoreSuite(open);

    it('records a run of a plan job, lists runs newest first, confirms, records the apply and discards once', async () => {
      const owner = await suite.seedOwner();
      const first = newTfeRun(owner, await planJob(suite, owner, 1), { created_at: at(1) });
      const second = newTfeRun(owner, await planJob(suite, owner, 2), {
        created_at: at(2),
        is_destroy: true,
        auto_apply: true,
        plan_only: true,
        refresh: false,
        target_addrs: [],
        replace_addrs: ['aws_instance.web'],
        variable_keys: [],
      });
      expect(await suite.asOwner(owner.id, (stores) => stores.tfeRuns.create(first))).toEqual(first);
      expect(await suite.asOwner(owner.id, (stores) => stores.tfeRuns.create(second))).toEqual(second);
      expect(await suite.asOwner(owner.id, (stores) => stores.tfeRuns.get(owner.id, second.plan_job_id))).toEqual(
        second,
      );
      expect(await suite.asOwner(owner.id, (stores) => stores.tfeRuns.listByVine(owner.id, owner.vine.id))).toEqual([
        second,
        first,
      ]);
      expect(await suite.asOwner(owner.id, (stores) => stores.tfeRuns.listByVine(owner.id, uuid()))).toEqual([]);
      expect(await suite.asOwner(owner.id, (stores) => stores.tfeRuns.listByOwner(owner.id))).toEqual([second, first]);

      expect(
        await suite.asOwner(owner.id, (stores) => stores.tfeRuns.confirm(owner.id, first.plan_job_id, at(3), owner.id)),
      ).toBe(true);
      expect(
        await suite.asOwner(owner.id, (stores) => stores.tfeRuns.confirm(owner.id, first.plan_job_id, at(4), owner.id)),
      ).toBe(false);
      const apply = await planJob(suite, owner, 5);
      await suite.asOwner(owner.id, (stores) => stores.tfeRuns.setApply(owner.id, first.plan_job_id, apply));
      expect(
        await suite.asOwner(owner.id, (stores) => stores.tfeRuns.discard(owner.id, first.plan_job_id, at(6), owner.id)),
      ).toBe(true);
      expect(
        await suite.asOwner(owner.id, (stores) => stores.tfeRuns.discard(owner.id, first.plan_job_id, at(7), owner.id)),
      ).toBe(false);
      expect(await suite.asOwner(owner.id, (stores) => stores.tfeRuns.get(owner.id, first.plan_job_id))).toEqual({
        ...first,
        confirmed_at: at(3),
        confirmed_by: owner.id,
        apply_job_id: apply,
        discarded_at: at(6),
        discarded_by: owner.id,
      });
      // A discarded run is never confirmed.
      expect(
        await suite.asOwner(owner.id, (stores) =>
          stores.tfeRuns.confirm(owner.id, second.plan_job_id, at(8), owner.id).then(async (confirmed) => {
            await stores.tfeRuns.discard(owner.id, second.plan_job_id, at(8), owner.id);
            return confirmed && !(await stores.tfeRuns.confirm(owner.id, second.plan_job_id, at(9), owner.id));
          }),
        ),
      ).toBe(true);
    });

    it('refuses a run of a job that does not exist', async () => {
      const owner = await suite.seedOwner();
      await expectConflict(
        suite.asOwner(owner.id, (stores) => stores.tfeRuns.create(newTfeRun(owner, uuid()))),
        'referenced_record_missing',
      );
    });

    it("never shows nor changes one owner's runs for another", async () => {
      const a = await suite.seedOwner();
      const b = await suite.seedOwner();
      const run = newTfeRun(a, await planJob(suite, a));
      await suite.asOwner(a.id, (stores) => stores.tfeRuns.create(run));
      expect(await suite.asOwner(b.id, (stores) => stores.tfeRuns.get(a.id, run.plan_job_id))).toBeNull();
      expect(await suite.asOwner(b.id, (stores) => stores.tfeRuns.get(b.id, run.plan_job_id))).toBeNull();
      expect(await suite.asOwner(b.id, (stores) => stores.tfeRuns.listByOwner(a.id))).toEqual([]);
      expect(await suite.asOwner(b.id, (stores) => stores.tfeRuns.listByVine(a.id, a.vine.id))).toEqual([]);
      expect(await suite.asOwner(b.id, (stores) => stores.tfeRuns.confirm(a.id, run.plan_job_id, at(2), b.id))).toBe(
        false,
      );
      expect(await suite.asOwner(b.id, (stores) => stores.tfeRuns.discard(a.id, run.plan_job_id, at(2), b.id))).toBe(
        false,
      );
      expect(await suite.asOwner(a.id, (stores) => stores.tfeRuns.get(a.id, run.plan_job_id))).toEqual(run);
    });
  });
}
