import type { Job, Vine, Worker } from '@trellis/core';
import { describe, expect, it } from 'vitest';
import { later, newDestroyWorkerJob, newJob, newVine, newWorker } from './fixtures.js';
import { type OpenStoreHarness, type SeededOwner, useStoreSuite } from './harness.js';

/**
 * `JobStore.queue` and `queuePosition` (issue 29): a job's position is the order the claim takes
 * it in. Each test drains the queue with real claims and checks them against the positions.
 */
export function describeJobQueueConformance(open: OpenStoreHarness): void {
  describe('JobStore.queue', () => {
    const suite = useStoreSuite(open);

    const create = (owner: SeededOwner, ...jobs: Job[]) =>
      suite.asOwner(owner.id, async (stores) => {
        for (const job of jobs) await stores.jobs.create(job);
      });
    const claim = async (owner: SeededOwner, worker: Worker) =>
      (await suite.asOwner(owner.id, (stores) => stores.jobs.claimNext({ id: worker.id, owner_id: owner.id }, later())))
        ?.job ?? null;
    const finish = (owner: SeededOwner, job: Job) =>
      suite.asOwner(owner.id, (stores) =>
        stores.jobs.update(owner.id, job.id, 'PROCESSING', { status: 'SUCCESS', finished_at: later() }),
      );
    const queueOf = (owner: SeededOwner, limit = 100) =>
      suite.asOwner(owner.id, (stores) => stores.jobs.queue(owner.id, limit));
    const idsInQueue = async (owner: SeededOwner) => (await queueOf(owner)).jobs.map((entry) => entry.job.id);
    const positionOf = (owner: SeededOwner, id: string) =>
      suite.asOwner(owner.id, (stores) => stores.jobs.queuePosition(owner.id, id));
    const vines = (owner: SeededOwner, count: number) =>
      suite.asOwner(owner.id, async (stores) => {
        const made: Vine[] = [];
        for (let i = 0; i < count; i += 1) made.push(await stores.vines.create(newVine(owner.id, owner.vineyard.id)));
        return made;
      });
    const workers = (owner: SeededOwner, count: number) =>
      suite.asOwner(owner.id, async (stores) => {
        const made: Worker[] = [];
        for (let i = 0; i < count; i += 1) made.push(await stores.workers.create(newWorker(owner.id)));
        return made;
      });

    /**
     * Claims the whole queue one job after another, each ending before the next claim, and checks
     * at every step that the job claimed is the one at position 1 and that positions run 1..n.
     */
    const drainInPositionOrder = async (owner: SeededOwner, worker: Worker) => {
      const claimed: string[] = [];
      for (;;) {
        const queue = await queueOf(owner);
        expect(queue.jobs.map((entry) => entry.position)).toEqual(queue.jobs.map((_, index) => index + 1));
        expect(queue.total).toBe(queue.jobs.length);
        for (const entry of queue.jobs) expect(await positionOf(owner, entry.job.id)).toBe(entry.position);
        const job = await claim(owner, worker);
        if (!job) {
          expect(queue.jobs).toEqual([]);
          return claimed;
        }
        expect(job.id).toBe(queue.jobs[0]?.job.id);
        claimed.push(job.id);
        await finish(owner, job);
      }
    };

    it('is empty when nothing is queued, and a job that is not queued has no position', async () => {
      const owner = await suite.seedOwner();
      expect(await queueOf(owner)).toEqual({ jobs: [], total: 0 });
      const done = newJob(owner.id, owner.vine, { status: 'SUCCESS', finished_at: later() });
      await create(owner, done);
      expect(await queueOf(owner)).toEqual({ jobs: [], total: 0 });
      expect(await positionOf(owner, done.id)).toBeNull();
    });

    it('lists the queued jobs in the order agents claim them one after another', async () => {
      const owner = await suite.seedOwner();
      const [v1, v2, v3] = (await vines(owner, 3)) as [Vine, Vine, Vine];
      const plan = newJob(owner.id, v1, { status: 'SUCCESS', finished_at: later() });
      const laterPlans = [newJob(owner.id, v2), newJob(owner.id, v3)];
      const deploy = newJob(owner.id, v1, { job_type: 'DEPLOY', plan_job_id: plan.id });
      const [other] = (await workers(owner, 1)) as [Worker];
      const destroyOther = newDestroyWorkerJob(owner.id, other);
      await create(owner, plan, ...laterPlans, deploy, destroyOther);

      const queue = await queueOf(owner);
      // The DEPLOY of the plan is offered at its plan's place, ahead of the plans queued after it.
      expect(queue.jobs.map((entry) => [entry.job.id, entry.position])).toEqual([
        [deploy.id, 1],
        [laterPlans[0]?.id, 2],
        [laterPlans[1]?.id, 3],
        [destroyOther.id, 4],
      ]);
      expect(queue.jobs[0]?.job).toMatchObject({ id: deploy.id, status: 'QUEUED', plan_job_id: plan.id });
      expect(queue.total).toBe(4);

      // Agents claim without any job ending: each claim takes the job at position 1.
      const [w1, w2, w3] = (await workers(owner, 3)) as [Worker, Worker, Worker];
      for (const worker of [w1, w2, w3, owner.worker]) {
        const head = (await queueOf(owner)).jobs[0]?.job.id;
        expect((await claim(owner, worker))?.id).toBe(head);
      }
      expect(await queueOf(owner)).toEqual({ jobs: [], total: 0 });
    });

    it("keeps a vine's jobs in the order they were queued, even when a later one has an earlier place", async () => {
      const owner = await suite.seedOwner();
      const [v1, v2] = (await vines(owner, 2)) as [Vine, Vine];
      const plan = newJob(owner.id, v1, { status: 'SUCCESS', finished_at: later() });
      const firstOfVine = newJob(owner.id, v1);
      const otherVine = newJob(owner.id, v2);
      // Its plan's place is the earliest, but the job of v1 queued before it goes first.
      const deploy = newJob(owner.id, v1, { job_type: 'DEPLOY', plan_job_id: plan.id });
      const noVine = newJob(owner.id, null, { job_type: 'PLAN' });
      const afterAll = newJob(owner.id, v2);
      await create(owner, plan, firstOfVine, otherVine, deploy, noVine, afterAll);

      const order = await idsInQueue(owner);
      expect(order).toEqual([firstOfVine.id, deploy.id, otherVine.id, noVine.id, afterAll.id]);
      expect(await drainInPositionOrder(owner, owner.worker)).toEqual(order);
    });

    it("a job running on a vine does not change the positions of the vine's queued jobs", async () => {
      const owner = await suite.seedOwner();
      const [v2] = (await vines(owner, 1)) as [Vine];
      const running = newJob(owner.id, owner.vine);
      const next = newJob(owner.id, owner.vine);
      const other = newJob(owner.id, v2);
      await create(owner, running, next, other);
      expect((await claim(owner, owner.worker))?.id).toBe(running.id);
      expect(await idsInQueue(owner)).toEqual([next.id, other.id]);
      // The vine is busy, so an agent claiming now passes over position 1; once it ends, order holds.
      const [w2] = (await workers(owner, 1)) as [Worker];
      expect((await claim(owner, w2))?.id).toBe(other.id);
      await finish(owner, running);
      expect(await drainInPositionOrder(owner, w2)).toEqual([next.id]);
    });

    it("numbers each owner's queue on its own, and reads several owners' at once", async () => {
      const a = await suite.seedOwner();
      const b = await suite.seedOwner();
      const aJobs = [newJob(a.id, a.vine), newJob(a.id, null), newJob(a.id, null)];
      const bJobs = [newJob(b.id, b.vine), newJob(b.id, null)];
      await create(a, aJobs[0] as Job);
      await create(b, bJobs[0] as Job);
      await create(a, aJobs[1] as Job, aJobs[2] as Job);
      await create(b, bJobs[1] as Job);

      expect((await queueOf(a)).jobs.map((entry) => entry.position)).toEqual([1, 2, 3]);
      expect((await queueOf(b)).jobs.map((entry) => entry.position)).toEqual([1, 2]);
      // Another owner's job has no position in this owner's queue.
      expect(await positionOf(a, bJobs[0]?.id as string)).toBeNull();

      const both = await suite.asSystem((stores) => stores.jobs.queue([a.id, b.id], 3));
      expect(both.total).toBe(5);
      // Owners interleaved by position, the one queued first first: the head of each queue.
      expect(both.jobs.map((entry) => [entry.job.id, entry.position])).toEqual([
        [aJobs[0]?.id, 1],
        [bJobs[0]?.id, 1],
        [aJobs[1]?.id, 2],
      ]);
      expect(await drainInPositionOrder(a, a.worker)).toEqual(aJobs.map((job) => job.id));
      expect(await drainInPositionOrder(b, b.worker)).toEqual(bJobs.map((job) => job.id));
    });
  });
}
