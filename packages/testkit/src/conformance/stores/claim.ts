import { randomUUID } from 'node:crypto';
import type { CloudIdentity, Job, Vine, Worker } from '@trellis/core';
import { describe, expect, it } from 'vitest';
import { later, newCloudIdentity, newDestroyWorkerJob, newJob, newVine, newWorker } from './fixtures.js';
import { type OpenStoreHarness, type SeededOwner, type StoreSuite, useStoreSuite } from './harness.js';

/** The claim rule of DESIGN §3 and `JobStore.claimNext`. */
export function describeJobClaimConformance(open: OpenStoreHarness): void {
  describe('JobStore.claimNext', () => {
    const suite = useStoreSuite(open);

    const claimWhole = (owner: SeededOwner, worker: Worker, at = later()) =>
      suite.asOwner(owner.id, (stores) => stores.jobs.claimNext({ id: worker.id, owner_id: owner.id }, at));
    const claim = async (owner: SeededOwner, worker: Worker, at = later()) =>
      (await claimWhole(owner, worker, at))?.job ?? null;
    const create = (owner: SeededOwner, ...jobs: Job[]) =>
      suite.asOwner(owner.id, async (stores) => {
        for (const job of jobs) await stores.jobs.create(job);
      });
    const finish = (owner: SeededOwner, job: Job, status: 'SUCCESS' | 'FAILED' | 'CANCELLED' = 'SUCCESS') =>
      suite.asOwner(owner.id, (stores) =>
        stores.jobs.update(owner.id, job.id, job.status, { status, finished_at: later() }),
      );
    const workers = (s: StoreSuite, owner: SeededOwner, count: number) =>
      s.asOwner(owner.id, async (stores) => {
        const made: Worker[] = [];
        for (let i = 0; i < count; i += 1) made.push(await stores.workers.create(newWorker(owner.id)));
        return made;
      });
    const vines = (s: StoreSuite, owner: SeededOwner, count: number) =>
      s.asOwner(owner.id, async (stores) => {
        const made: Vine[] = [];
        for (let i = 0; i < count; i += 1) made.push(await stores.vines.create(newVine(owner.id, owner.vineyard.id)));
        return made;
      });

    it('answers null when no job is queued', async () => {
      const owner = await suite.seedOwner();
      expect(await claim(owner, owner.worker)).toBeNull();
      await create(owner, newJob(owner.id, owner.vine, { status: 'SUCCESS', finished_at: later() }));
      expect(await claim(owner, owner.worker)).toBeNull();
    });

    it('takes the job: PROCESSING, claimed by the worker at the given time, its vine status kept', async () => {
      const owner = await suite.seedOwner();
      const job = newJob(owner.id, owner.vine);
      await create(owner, job);
      const when = later();
      const claimed = await claim(owner, owner.worker, when);
      const expected: Job = {
        ...job,
        status: 'PROCESSING',
        claimed_by_worker_id: owner.worker.id,
        claimed_at: when,
        vine_status_before: owner.vine.status,
      };
      expect(claimed).toEqual(expected);
      expect(await suite.asOwner(owner.id, (stores) => stores.jobs.get(owner.id, job.id))).toEqual(expected);
      expect(await claim(owner, owner.worker)).toBeNull();
    });

    it('takes the oldest queued job first, across vines', async () => {
      const owner = await suite.seedOwner();
      const [v1, v2, v3] = (await vines(suite, owner, 3)) as [Vine, Vine, Vine];
      const jobs = [newJob(owner.id, v2), newJob(owner.id, v3), newJob(owner.id, v1)];
      await create(owner, ...jobs);
      const [w1, w2, w3] = (await workers(suite, owner, 3)) as [Worker, Worker, Worker];
      const order = [await claim(owner, w1), await claim(owner, w2), await claim(owner, w3)];
      expect(order.map((job) => job?.id)).toEqual(jobs.map((job) => job.id));
    });

    it("offers a DEPLOY of a plan at its plan's place in the queue, ahead of jobs queued after that plan", async () => {
      const owner = await suite.seedOwner();
      const [v1, v2, v3] = (await vines(suite, owner, 3)) as [Vine, Vine, Vine];
      const plan = newJob(owner.id, v1, { status: 'SUCCESS', finished_at: later() });
      const laterPlans = [newJob(owner.id, v2), newJob(owner.id, v3)];
      const deploy = newJob(owner.id, v1, { job_type: 'DEPLOY', plan_job_id: plan.id });
      const standalone = newJob(owner.id, v1, { job_type: 'DEPLOY' });
      await create(owner, plan, ...laterPlans, deploy, standalone);
      const [w1, w2, w3] = (await workers(suite, owner, 3)) as [Worker, Worker, Worker];
      const order = [await claim(owner, w1), await claim(owner, w2), await claim(owner, w3)];
      // A DEPLOY without a plan keeps its own place; jobs of one vine still go one at a time.
      expect(order.map((job) => job?.id)).toEqual([deploy.id, ...laterPlans.map((job) => job.id)]);
      await finish(owner, order[0] as Job);
      expect((await claim(owner, w1))?.id).toBe(standalone.id);
    });

    describe("a DEPLOY of a plan offered to the plan's agent (issue 31, JobOffer)", () => {
      /** A plan that ran on `planAgent`, and a DEPLOY of it offered to that agent until `until`. */
      const offered = async (owner: SeededOwner, planAgent: Worker, deploy: Partial<Job> = {}) => {
        const plan = newJob(owner.id, owner.vine, {
          status: 'SUCCESS',
          claimed_by_worker_id: planAgent.id,
          finished_at: later(),
        });
        const job = newJob(owner.id, owner.vine, { job_type: 'DEPLOY', plan_job_id: plan.id, ...deploy });
        const queuedAt = later();
        const until = new Date(Date.parse(queuedAt) + 3_000).toISOString();
        await suite.asOwner(owner.id, async (stores) => {
          await stores.jobs.create(plan);
          await stores.jobs.create(job, { worker_id: planAgent.id, until });
        });
        const before = new Date(Date.parse(until) - 1).toISOString();
        return { job, before, until };
      };

      it("gives it to the plan's agent within the window", async () => {
        const owner = await suite.seedOwner();
        const { job, before } = await offered(owner, owner.worker);
        const claimed = await claim(owner, owner.worker, before);
        expect(claimed?.id).toBe(job.id);
        expect(claimed?.claimed_by_worker_id).toBe(owner.worker.id);
      });

      it('passes it over for another agent within the window, which takes other work; after it, any agent takes it', async () => {
        const owner = await suite.seedOwner();
        const [other] = (await workers(suite, owner, 1)) as [Worker];
        const { job, before, until } = await offered(owner, owner.worker);
        const [v2] = (await vines(suite, owner, 1)) as [Vine];
        const otherWork = newJob(owner.id, v2);
        await create(owner, otherWork);
        // The DEPLOY is first in the queue (its plan's place), yet the other agent takes the other job.
        expect((await claim(owner, other, before))?.id).toBe(otherWork.id);
        const [third] = (await workers(suite, owner, 1)) as [Worker];
        expect(await claim(owner, third, before)).toBeNull();
        const claimed = await claim(owner, third, until);
        expect(claimed?.id).toBe(job.id);
        expect(claimed?.claimed_by_worker_id).toBe(third.id);
      });

      it('keeps the rule of a job assigned to an agent, whatever its offer says', async () => {
        const owner = await suite.seedOwner();
        const [assignee] = (await workers(suite, owner, 1)) as [Worker];
        const { job, before, until } = await offered(owner, owner.worker, { assigned_worker_id: assignee.id });
        expect(await claim(owner, owner.worker, before)).toBeNull();
        expect(await claim(owner, owner.worker, until)).toBeNull();
        expect((await claim(owner, assignee, before))?.id).toBe(job.id);
      });

      it('says which offers stand, for people: within the window, of queued jobs assigned to nobody, to their owner only', async () => {
        const owner = await suite.seedOwner();
        const { job, before, until } = await offered(owner, owner.worker);
        const [assignee] = (await workers(suite, owner, 1)) as [Worker];
        const assigned = await offered(owner, owner.worker, { assigned_worker_id: assignee.id });
        const plain = newJob(owner.id, owner.vine);
        await create(owner, plain);
        const offers = (at: string, ownerId = owner.id) =>
          suite.asOwner(ownerId, (stores) =>
            stores.jobs.standingOffers(ownerId, [job.id, assigned.job.id, plain.id], at),
          );
        expect([...(await offers(before))]).toEqual([[job.id, { worker_id: owner.worker.id, until }]]);
        expect((await offers(until)).size).toBe(0);
        const stranger = await suite.seedOwner();
        expect((await offers(before, stranger.id)).size).toBe(0);
        // Claimed by its agent: no longer queued, no longer offered.
        expect((await claim(owner, owner.worker, before))?.id).toBe(job.id);
        expect((await offers(before)).size).toBe(0);
        expect((await suite.asOwner(owner.id, (stores) => stores.jobs.standingOffers(owner.id, [], before))).size).toBe(
          0,
        );
      });

      it('is a job like any other once read: the offer is not part of the record', async () => {
        const owner = await suite.seedOwner();
        const { job } = await offered(owner, owner.worker);
        expect(await suite.asOwner(owner.id, (stores) => stores.jobs.get(owner.id, job.id))).toEqual(job);
      });
    });

    it("never gives a worker another owner's job", async () => {
      const a = await suite.seedOwner();
      const b = await suite.seedOwner();
      const job = newJob(a.id, a.vine);
      await create(a, job);
      expect(await claim(b, b.worker)).toBeNull();
      expect((await claim(a, a.worker))?.id).toBe(job.id);
    });

    it('gives a job assigned to a worker to that worker only', async () => {
      const owner = await suite.seedOwner();
      const [other] = (await workers(suite, owner, 1)) as [Worker];
      const job = newJob(owner.id, owner.vine, { assigned_worker_id: other.id });
      await create(owner, job);
      expect(await claim(owner, owner.worker)).toBeNull();
      expect((await claim(owner, other))?.id).toBe(job.id);
    });

    it('never gives a worker the DESTROY_WORKER job that targets it', async () => {
      const owner = await suite.seedOwner();
      const [other] = (await workers(suite, owner, 1)) as [Worker];
      const job = newDestroyWorkerJob(owner.id, owner.worker);
      await create(owner, job);
      expect(await claim(owner, owner.worker)).toBeNull();
      const claimed = await claim(owner, other);
      expect(claimed?.id).toBe(job.id);
      expect(claimed?.target_worker_id).toBe(owner.worker.id);
    });

    it('runs one job of a vine at a time, in the order they were queued', async () => {
      const owner = await suite.seedOwner();
      const [w2] = (await workers(suite, owner, 1)) as [Worker];
      const jobs = [newJob(owner.id, owner.vine), newJob(owner.id, owner.vine), newJob(owner.id, owner.vine)];
      await create(owner, ...jobs);
      const first = await claim(owner, owner.worker);
      expect(first?.id).toBe(jobs[0]?.id);
      expect(await claim(owner, w2), 'the vine has a PROCESSING job').toBeNull();
      await finish(owner, first as Job);
      const second = await claim(owner, w2);
      expect(second?.id).toBe(jobs[1]?.id);
      await finish(owner, second as Job, 'FAILED');
      expect((await claim(owner, owner.worker))?.id).toBe(jobs[2]?.id);
    });

    it('keeps FIFO per vine even when the older job is one this worker may not run', async () => {
      const owner = await suite.seedOwner();
      const [other] = (await workers(suite, owner, 1)) as [Worker];
      const older = newJob(owner.id, owner.vine, { assigned_worker_id: other.id });
      const newer = newJob(owner.id, owner.vine);
      await create(owner, older, newer);
      expect(await claim(owner, owner.worker)).toBeNull();
      expect((await claim(owner, other))?.id).toBe(older.id);
    });

    it('lets cancelled and finished jobs of a vine block nothing', async () => {
      const owner = await suite.seedOwner();
      const cancelled = newJob(owner.id, owner.vine);
      const next = newJob(owner.id, owner.vine);
      await create(owner, cancelled, next);
      await finish(owner, cancelled, 'CANCELLED');
      expect((await claim(owner, owner.worker))?.id).toBe(next.id);
    });

    it('does not apply the vine rules to jobs without a vine', async () => {
      const owner = await suite.seedOwner();
      const [target1, target2, runner] = (await workers(suite, owner, 3)) as [Worker, Worker, Worker];
      const jobs = [newDestroyWorkerJob(owner.id, target1), newDestroyWorkerJob(owner.id, target2)];
      await create(owner, ...jobs);
      const first = await claim(owner, runner);
      const second = await claim(owner, owner.worker);
      expect([first?.id, second?.id]).toEqual(jobs.map((job) => job.id));
    });

    it('hands each job to one of many concurrent claimers, and one job per vine at a time', async () => {
      const owner = await suite.seedOwner();
      const vineList = await vines(suite, owner, 3);
      const workerList = await workers(suite, owner, 8);
      await create(owner, ...vineList.flatMap((vine) => [newJob(owner.id, vine), newJob(owner.id, vine)]));
      const claimed = await Promise.all(workerList.map((worker) => claim(owner, worker)));
      const got = claimed.filter((job): job is Job => job !== null);
      expect(got).toHaveLength(3);
      expect(new Set(got.map((job) => job.vine_id)).size).toBe(3);
      const processing = await suite.asOwner(owner.id, (stores) =>
        stores.jobs.list(owner.id, { status: 'PROCESSING' }),
      );
      expect(processing.map((job) => job.id).sort()).toEqual(got.map((job) => job.id).sort());
    });

    it("moves the job's vine as it starts, in the same step, and returns its vineyard and identity", async () => {
      const owner = await suite.seedOwner();
      const { identity, vine } = await suite.asOwner(owner.id, async (stores) => {
        const identity = await stores.cloudIdentities.create(newCloudIdentity(owner.id));
        const vine = await stores.vines.create(
          newVine(owner.id, owner.vineyard.id, {
            status: 'PLANNED',
            cloud_identity_id: identity.id,
            status_message: 'old',
          }),
        );
        return { identity, vine };
      });
      const job = newJob(owner.id, vine, { job_type: 'DEPLOY' });
      await create(owner, job);
      const when = later();
      const claimed = await claimWhole(owner, owner.worker, when);
      expect(claimed?.job.id).toBe(job.id);
      expect(claimed?.job.vine_status_before).toBe('PLANNED');
      expect(claimed?.job.config_snapshot).toEqual(job.config_snapshot);
      expect(claimed?.vine).toEqual({ before: 'PLANNED', after: 'DEPLOYING' });
      expect(claimed?.cloud_identity).toEqual(identity);
      expect(claimed?.vineyard).toEqual(owner.vineyard);
      const stored = await suite.asOwner(owner.id, (stores) => stores.vines.get(owner.id, vine.id));
      expect(stored).toMatchObject({ status: 'DEPLOYING', status_message: null, updated_at: when });
    });

    it('returns an OIDC cloud identity with its settings', async () => {
      const owner = await suite.seedOwner();
      const identity: CloudIdentity = {
        id: randomUUID(),
        owner_id: owner.id,
        kind: 'oidc',
        provider: 'gcp',
        workload_identity_provider: 'projects/1/locations/global/workloadIdentityPools/p/providers/trellis',
        service_account_email: 'deployer@example.iam.gserviceaccount.com',
        audience: null,
      };
      const vine = await suite.asOwner(owner.id, async (stores) => {
        await stores.cloudIdentities.create(identity);
        return stores.vines.create(newVine(owner.id, owner.vineyard.id, { cloud_identity_id: identity.id }));
      });
      await create(owner, newJob(owner.id, vine));
      expect((await claimWhole(owner, owner.worker))?.cloud_identity).toEqual(identity);
    });

    it('leaves the vine alone for a speculative plan, and has no vine nor identity for DESTROY_WORKER', async () => {
      const owner = await suite.seedOwner();
      const [target] = (await workers(suite, owner, 1)) as [Worker];
      await create(
        owner,
        newJob(owner.id, owner.vine, { trigger: { type: 'drift' } }),
        newDestroyWorkerJob(owner.id, target),
      );
      const drift = await claimWhole(owner, owner.worker);
      expect(drift?.vine).toBeNull();
      expect(drift?.job.vine_status_before).toBeNull();
      expect(drift?.vineyard).toEqual(owner.vineyard);
      const stored = await suite.asOwner(owner.id, (stores) => stores.vines.get(owner.id, owner.vine.id));
      expect(stored?.status).toBe(owner.vine.status);
      const destroy = await claimWhole(owner, owner.worker);
      expect(destroy).toMatchObject({ vine: null, cloud_identity: null, vineyard: null });
      expect(destroy?.job.target_worker_id).toBe(target.id);
    });

    it('does not move a vine that no job starts from, and says so', async () => {
      const owner = await suite.seedOwner();
      const vine = await suite.asOwner(owner.id, (stores) =>
        stores.vines.create(newVine(owner.id, owner.vineyard.id, { status: 'PLANNING' })),
      );
      await create(owner, newJob(owner.id, vine));
      const claimed = await claimWhole(owner, owner.worker);
      expect(claimed?.vine).toEqual({ before: 'PLANNING', after: 'PLANNING' });
      expect(claimed?.job.vine_status_before).toBeNull();
    });

    it('moves each vine once when many claimers race over its jobs', async () => {
      const owner = await suite.seedOwner();
      const vineList = await vines(suite, owner, 4);
      const workerList = await workers(suite, owner, 8);
      await create(owner, ...vineList.flatMap((vine) => [newJob(owner.id, vine), newJob(owner.id, vine)]));
      const claimed = (await Promise.all(workerList.map((worker) => claimWhole(owner, worker)))).filter(
        (claim) => claim !== null,
      );
      expect(claimed).toHaveLength(4);
      expect(claimed.map((claim) => claim.vine)).toEqual(vineList.map(() => ({ before: 'NEW', after: 'PLANNING' })));
      const stored = await suite.asOwner(owner.id, (stores) => stores.vines.list(owner.id));
      expect(stored.filter((vine) => vineList.some((v) => v.id === vine.id)).map((vine) => vine.status)).toEqual(
        vineList.map(() => 'PLANNING'),
      );
    });
  });
}
