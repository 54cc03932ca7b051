import type { Job, JobFilter } from '@trellis/core';
import { describe, expect, it } from 'vitest';
import { pullRequestTrigger } from '../../gitJobs.js';
import { at, later, newCloudIdentity, newJob, newVine, newVineyard, newWorker, uuid } from './fixtures.js';
import { type OpenStoreHarness, type SeededOwner, type StoreSuite, useStoreSuite } from './harness.js';

export function describeJobStoreConformance(open: OpenStoreHarness): void {
  describe('JobStore', () => {
    const suite = useStoreSuite(open);

    it('creates a queued job and reads it back, snapshot JSON and nulls intact', async () => {
      const owner = await suite.seedOwner();
      const job = newJob(owner.id, owner.vine, {
        execution_metadata: { note: 'queued by test', n: 1.5, list: [1, 'x'] },
      });
      expect(await suite.asOwner(owner.id, (stores) => stores.jobs.create(job))).toEqual(job);
      expect(await suite.asOwner(owner.id, (stores) => stores.jobs.get(owner.id, job.id))).toEqual(job);
      expect(await suite.asOwner(owner.id, (stores) => stores.jobs.get(owner.id, uuid()))).toBeNull();
      expect(await suite.asOwner(owner.id, (stores) => stores.jobs.getForUpdate(owner.id, job.id))).toEqual(job);
      expect(await suite.asOwner(owner.id, (stores) => stores.jobs.getForUpdate(owner.id, uuid()))).toBeNull();
    });

    it('keeps each job trigger (manual, drift, upstream)', async () => {
      const owner = await suite.seedOwner();
      const jobs = [
        newJob(owner.id, owner.vine),
        newJob(owner.id, owner.vine, { trigger: { type: 'drift' } }),
        newJob(owner.id, owner.vine, { trigger: { type: 'upstream', vine_id: uuid(), job_id: uuid() } }),
      ];
      for (const job of jobs) {
        expect(await suite.asOwner(owner.id, (stores) => stores.jobs.create(job))).toEqual(job);
        expect(await suite.asOwner(owner.id, (stores) => stores.jobs.get(owner.id, job.id))).toEqual(job);
      }
    });

    it('round-trips a job with every optional field set', async () => {
      const owner = await suite.seedOwner();
      const { identity, vine, plan, other } = await suite.asOwner(owner.id, async (stores) => {
        const identity = await stores.cloudIdentities.create(newCloudIdentity(owner.id));
        const vine = await stores.vines.create(
          newVine(owner.id, owner.vineyard.id, { cloud_identity_id: identity.id }),
        );
        const plan = await stores.jobs.create(newJob(owner.id, vine, { status: 'SUCCESS' }));
        const other = await stores.workers.create(newWorker(owner.id));
        return { identity, vine, plan, other };
      });
      const job = newJob(owner.id, vine, {
        job_type: 'DEPLOY',
        status: 'FAILED',
        cloud_identity_id: identity.id,
        assigned_worker_id: owner.worker.id,
        claimed_by_worker_id: owner.worker.id,
        plan_job_id: plan.id,
        target_worker_id: other.id,
        execution_metadata: { cluster_name: 'c', outputs: { a: { value: 1, sensitive: false } } },
        error_message: 'exit status 1\nError: “quoted” ✓',
        vine_status_before: 'PLANNED',
        claimed_at: later(),
        finished_at: later(),
      });
      await suite.asOwner(owner.id, (stores) => stores.jobs.create(job));
      expect(await suite.asOwner(owner.id, (stores) => stores.jobs.get(owner.id, job.id))).toEqual(job);
    });

    it('lists newest first and filters by status, vineyard and vine', async () => {
      const owner = await suite.seedOwner();
      const { vine2, jobs } = await suite.asOwner(owner.id, async (stores) => {
        const vineyard2 = await stores.vineyards.create(newVineyard(owner.id));
        const vine2 = await stores.vines.create(newVine(owner.id, vineyard2.id));
        const jobs = [
          await stores.jobs.create(newJob(owner.id, owner.vine, { created_at: at(1) })),
          await stores.jobs.create(newJob(owner.id, vine2, { created_at: at(2), status: 'SUCCESS' })),
          await stores.jobs.create(newJob(owner.id, owner.vine, { created_at: at(3), status: 'SUCCESS' })),
          await stores.jobs.create(newJob(owner.id, owner.vine, { created_at: at(3) })),
        ];
        return { vine2, jobs };
      });
      const [j1, j2, j3, j4] = jobs as [Job, Job, Job, Job];
      const ids = (list: Job[]) => list.map((job) => job.id);
      const list = (filter?: JobFilter) => suite.asOwner(owner.id, (stores) => stores.jobs.list(owner.id, filter));
      expect(ids(await list())).toEqual([j4.id, j3.id, j2.id, j1.id]);
      expect(ids(await list({ status: 'SUCCESS' }))).toEqual([j3.id, j2.id]);
      expect(ids(await list({ vineyard_id: vine2.vineyard_id }))).toEqual([j2.id]);
      expect(ids(await list({ vine_id: owner.vine.id, status: 'QUEUED' }))).toEqual([j4.id, j1.id]);
      expect(await list({ status: 'CANCELLED' })).toEqual([]);
    });

    it('updates only when the job is still in the expected status, returning the new job', async () => {
      const owner = await suite.seedOwner();
      const job = await suite.asOwner(owner.id, (stores) =>
        stores.jobs.create(
          newJob(owner.id, owner.vine, {
            status: 'PROCESSING',
            claimed_by_worker_id: owner.worker.id,
            claimed_at: later(),
          }),
        ),
      );
      const finishedAt = later();
      const patch = {
        status: 'SUCCESS' as const,
        execution_metadata: { outputs: { url: 'https://x.example.test' } },
        error_message: null,
        finished_at: finishedAt,
        vine_status_before: 'DEPLOYED' as const,
      };
      const updated = await suite.asOwner(owner.id, (stores) =>
        stores.jobs.update(owner.id, job.id, 'PROCESSING', patch),
      );
      const expected: Job = { ...job, ...patch };
      expect(updated).toEqual(expected);
      expect(await suite.asOwner(owner.id, (stores) => stores.jobs.get(owner.id, job.id))).toEqual(expected);

      const lost = await suite.asOwner(owner.id, (stores) =>
        stores.jobs.update(owner.id, job.id, 'PROCESSING', { status: 'FAILED', error_message: 'too late' }),
      );
      expect(lost).toBeNull();
      expect(await suite.asOwner(owner.id, (stores) => stores.jobs.get(owner.id, job.id))).toEqual(expected);
    });

    it('leaves fields a patch does not name, and answers an empty patch with the job or null', async () => {
      const owner = await suite.seedOwner();
      const job = await suite.asOwner(owner.id, (stores) =>
        stores.jobs.create(newJob(owner.id, owner.vine, { execution_metadata: { keep: true }, error_message: 'keep' })),
      );
      const metadataOnly = await suite.asOwner(owner.id, (stores) =>
        stores.jobs.update(owner.id, job.id, 'QUEUED', { vine_status_before: 'NEW' }),
      );
      expect(metadataOnly).toEqual({ ...job, vine_status_before: 'NEW' });
      expect(await suite.asOwner(owner.id, (stores) => stores.jobs.update(owner.id, job.id, 'QUEUED', {}))).toEqual({
        ...job,
        vine_status_before: 'NEW',
      });
      expect(await suite.asOwner(owner.id, (stores) => stores.jobs.update(owner.id, job.id, 'SUCCESS', {}))).toBeNull();
    });

    it('of two concurrent updates expecting the same status, exactly one wins', async () => {
      const owner = await suite.seedOwner();
      const job = await suite.asOwner(owner.id, (stores) => stores.jobs.create(newJob(owner.id, owner.vine)));
      const results = await Promise.all(
        (['CANCELLED', 'PROCESSING'] as const).map((status) =>
          suite.asOwner(owner.id, (stores) => stores.jobs.update(owner.id, job.id, 'QUEUED', { status })),
        ),
      );
      expect(results.filter((result) => result !== null)).toHaveLength(1);
    });

    it('records a plan decision and an override once each: of two racing writers one wins', async () => {
      const owner = await suite.seedOwner();
      const creator = uuid();
      const plan = newJob(owner.id, owner.vine, { status: 'SUCCESS', created_by: creator });
      expect(await suite.asOwner(owner.id, (stores) => stores.jobs.create(plan))).toEqual(plan);
      const decision = (decision: 'approved' | 'rejected', comment: string | null) => ({
        user_id: uuid(),
        email: 'reviewer@example.test',
        at: at(5),
        decision,
        comment,
      });
      const approvals = [decision('approved', null), decision('rejected', 'wrong region')];
      const results = await Promise.all(
        approvals.map((approval) =>
          suite.asOwner(owner.id, (stores) => stores.jobs.setApproval(owner.id, plan.id, approval)),
        ),
      );
      const winners = results.filter((result): result is Job => result !== null);
      expect(winners).toHaveLength(1);
      const stored = await suite.asOwner(owner.id, (stores) => stores.jobs.get(owner.id, plan.id));
      expect(stored).toEqual({ ...plan, approval: winners[0]?.approval });
      expect(approvals).toContainEqual(stored?.approval);

      const override = { user_id: uuid(), email: null, at: at(6), reason: 'accepted risk' };
      const overridden = await suite.asOwner(owner.id, (stores) =>
        stores.jobs.setPolicyOverride(owner.id, plan.id, override),
      );
      expect(overridden).toEqual({ ...stored, policy_override: override });
      const again = await suite.asOwner(owner.id, (stores) =>
        stores.jobs.setPolicyOverride(owner.id, plan.id, { ...override, reason: 'again' }),
      );
      expect(again).toBeNull();
      // Another owner can neither decide nor override it.
      const other = await suite.seedOwner();
      const fresh = await suite.asOwner(owner.id, (stores) => stores.jobs.create(newJob(owner.id, owner.vine)));
      expect(
        await suite.asOwner(other.id, (stores) =>
          stores.jobs.setApproval(other.id, fresh.id, decision('approved', null)),
        ),
      ).toBeNull();
      expect(await suite.asOwner(owner.id, (stores) => stores.jobs.get(owner.id, fresh.id))).toEqual(fresh);
    });

    it('keeps the cause of a system job and the policy versions its claim carried (issue 23)', async () => {
      const owner = await suite.seedOwner();
      const cause = uuid();
      const plan = newJob(owner.id, owner.vine, { status: 'PROCESSING', caused_by: cause });
      await suite.asOwner(owner.id, (stores) => stores.jobs.create(plan));
      const carried = [
        { policy_id: uuid(), version: 3, name: 'tags', enforcement: 'mandatory' as const },
        { policy_id: uuid(), version: 1, name: 'sizes', enforcement: 'advisory' as const },
      ];
      await suite.asOwner(owner.id, (stores) => stores.jobs.recordClaimedPolicies(owner.id, plan.id, carried));
      const stored = await suite.asOwner(owner.id, (stores) => stores.jobs.get(owner.id, plan.id));
      expect(stored).toEqual({ ...plan, caused_by: cause, claimed_policies: carried });
      // Another owner cannot record on it.
      const other = await suite.seedOwner();
      await suite.asOwner(other.id, (stores) => stores.jobs.recordClaimedPolicies(other.id, plan.id, []));
      expect((await suite.asOwner(owner.id, (stores) => stores.jobs.get(owner.id, plan.id)))?.claimed_policies).toEqual(
        carried,
      );
    });

    it('lists the DEPLOY and the DESTROY that apply a plan', async () => {
      const owner = await suite.seedOwner();
      const plan = await suite.asOwner(owner.id, (stores) =>
        stores.jobs.create(newJob(owner.id, owner.vine, { status: 'SUCCESS' })),
      );
      const destroy = newJob(owner.id, owner.vine, { job_type: 'DESTROY', plan_job_id: plan.id });
      await suite.asOwner(owner.id, (stores) => stores.jobs.create(destroy));
      const applying = await suite.asOwner(owner.id, (stores) => stores.jobs.listDeploysOfPlan(owner.id, plan.id));
      expect(applying.map((job) => job.id)).toEqual([destroy.id]);
    });

    it("never shows or updates one owner's jobs for another", async () => {
      const a = await suite.seedOwner();
      const b = await suite.seedOwner();
      const job = await suite.asOwner(a.id, (stores) => stores.jobs.create(newJob(a.id, a.vine)));
      const seen = await suite.asOwner(b.id, async (stores) => [
        await stores.jobs.get(b.id, job.id),
        await stores.jobs.getForUpdate(b.id, job.id),
        await stores.jobs.list(b.id),
        await stores.jobs.update(b.id, job.id, 'QUEUED', { status: 'CANCELLED', error_message: 'hijacked' }),
      ]);
      expect(seen).toEqual([null, null, [], null]);
      expect(await suite.asOwner(a.id, (stores) => stores.jobs.get(a.id, job.id))).toEqual(job);
    });
  });

  describe('JobStore queries for agents and the sweep', () => {
    const suite = useStoreSuite(open);

    /** A PROCESSING job of `owner` claimed by `workerId`. */
    function running(owner: SeededOwner, workerId: string, overrides: Partial<Job> = {}): Job {
      return newJob(owner.id, null, {
        job_type: 'PLAN',
        status: 'PROCESSING',
        claimed_by_worker_id: workerId,
        claimed_at: at(0),
        ...overrides,
      });
    }

    async function workerOf(s: StoreSuite, owner: SeededOwner, lastHeartbeat: string | null) {
      return s.asOwner(owner.id, (stores) =>
        stores.workers.create(newWorker(owner.id, { last_heartbeat: lastHeartbeat })),
      );
    }

    it('lists PROCESSING jobs of every owner whose worker was silent since before the cutoff', async () => {
      const a = await suite.seedOwner();
      const b = await suite.seedOwner();
      const silent = await workerOf(suite, a, at(10));
      const alive = await workerOf(suite, a, at(200));
      const neverHeard = await workerOf(suite, b, null);
      const jobs = await suite.asSystem(async (stores) => ({
        silentJob: await stores.jobs.create(running(a, silent.id, { claimed_at: at(5) })),
        aliveJob: await stores.jobs.create(running(a, alive.id, { claimed_at: at(5) })),
        neverHeardJob: await stores.jobs.create(running(b, neverHeard.id, { claimed_at: at(20) })),
        finished: await stores.jobs.create(running(a, silent.id, { status: 'FAILED', finished_at: at(30) })),
        queued: await stores.jobs.create(newJob(a.id, a.vine)),
      }));
      const lost = await suite.asSystem((stores) => stores.jobs.listLost(at(100)));
      expect(lost.map((job) => job.id).sort()).toEqual([jobs.silentJob.id, jobs.neverHeardJob.id].sort());
      expect(lost.find((job) => job.id === jobs.silentJob.id)).toEqual(jobs.silentJob);
      expect(await suite.asSystem((stores) => stores.jobs.listLost(at(15)))).toEqual([jobs.silentJob]);
    });

    it('counts a worker as heard of when it claimed the job, when that is after its last heartbeat', async () => {
      const owner = await suite.seedOwner();
      // Silent since at(10), but it claimed a job at at(150): at a cutoff of at(100) it is not lost yet.
      const quiet = await workerOf(suite, owner, at(10));
      const neverHeard = await workerOf(suite, owner, null);
      const jobs = await suite.asOwner(owner.id, async (stores) => ({
        claimedLate: await stores.jobs.create(running(owner, quiet.id, { claimed_at: at(150) })),
        claimedEarly: await stores.jobs.create(running(owner, quiet.id, { claimed_at: at(50) })),
        claimedLateNoBeat: await stores.jobs.create(running(owner, neverHeard.id, { claimed_at: at(150) })),
      }));
      const lost = await suite.asSystem((stores) => stores.jobs.listLost(at(100)));
      expect(lost.map((job) => job.id)).toEqual([jobs.claimedEarly.id]);
      expect((await suite.asSystem((stores) => stores.jobs.listLost(at(200)))).map((job) => job.id)).toEqual([
        jobs.claimedLate.id,
        jobs.claimedEarly.id,
        jobs.claimedLateNoBeat.id,
      ]);
    });

    it('lists the ids of CANCELLED jobs a worker claimed that finished at or after a time', async () => {
      const owner = await suite.seedOwner();
      const other = await workerOf(suite, owner, null);
      const mine = owner.worker.id;
      const jobs = await suite.asOwner(owner.id, async (stores) => ({
        before: await stores.jobs.create(running(owner, mine, { status: 'CANCELLED', finished_at: at(9.999) })),
        boundary: await stores.jobs.create(running(owner, mine, { status: 'CANCELLED', finished_at: at(10) })),
        after: await stores.jobs.create(running(owner, mine, { status: 'CANCELLED', finished_at: at(50) })),
        failed: await stores.jobs.create(running(owner, mine, { status: 'FAILED', finished_at: at(50) })),
        theirs: await stores.jobs.create(running(owner, other.id, { status: 'CANCELLED', finished_at: at(50) })),
      }));
      const ids = await suite.asOwner(owner.id, (stores) => stores.jobs.listCancelledForWorker(owner.id, mine, at(10)));
      expect(ids.sort()).toEqual([jobs.boundary.id, jobs.after.id].sort());
      const stranger = await suite.seedOwner();
      expect(
        await suite.asOwner(stranger.id, (stores) => stores.jobs.listCancelledForWorker(stranger.id, mine, at(0))),
      ).toEqual([]);
    });

    it('lists the workers of an owner that have a PROCESSING job, each once', async () => {
      const owner = await suite.seedOwner();
      const idle = await workerOf(suite, owner, null);
      const busy = await workerOf(suite, owner, null);
      const done = await workerOf(suite, owner, null);
      await suite.asOwner(owner.id, async (stores) => {
        await stores.jobs.create(running(owner, busy.id));
        await stores.jobs.create(running(owner, busy.id));
        await stores.jobs.create(running(owner, owner.worker.id));
        await stores.jobs.create(running(owner, done.id, { status: 'SUCCESS', finished_at: at(3) }));
      });
      const ids = await suite.asOwner(owner.id, (stores) => stores.jobs.busyWorkerIds(owner.id));
      expect(ids.sort()).toEqual([busy.id, owner.worker.id].sort());
      expect(ids).not.toContain(idle.id);
      const stranger = await suite.seedOwner();
      expect(await suite.asOwner(stranger.id, (stores) => stores.jobs.busyWorkerIds(stranger.id))).toEqual([]);
    });

    it("answers each vine's newest succeeded PLAN or DEPLOY, a pull request's plan passed over", async () => {
      const owner = await suite.seedOwner();
      const pullRequest = pullRequestTrigger('a'.repeat(40));
      const jobs = await suite.asOwner(owner.id, async (stores) => {
        const second = await stores.vines.create(newVine(owner.id, owner.vineyard.id));
        const idle = await stores.vines.create(newVine(owner.id, owner.vineyard.id));
        const job = (vine: typeof second, minute: number, overrides: Partial<Job> = {}) =>
          stores.jobs.create(newJob(owner.id, vine, { status: 'SUCCESS', created_at: at(minute), ...overrides }));
        return {
          idle,
          oldPlan: await job(owner.vine, 1),
          deploy: await job(owner.vine, 2, { job_type: 'DEPLOY' }),
          laterFailed: await job(owner.vine, 3, { status: 'FAILED' }),
          laterPullRequest: await job(owner.vine, 4, { trigger: pullRequest }),
          laterDestroy: await job(owner.vine, 5, { job_type: 'DESTROY' }),
          laterQueued: await job(owner.vine, 6, { status: 'QUEUED' }),
          secondPlan: await job(second, 1, { trigger: { type: 'drift' } }),
          secondTie: await job(second, 1),
          onlyPullRequest: await job(idle, 1, { trigger: pullRequest }),
        };
      });
      const last = await suite.asOwner(owner.id, (stores) => stores.jobs.lastChangePerVine(owner.id));
      // Of two at the same time, the one made last; a vine with only a pull request's plan has none.
      expect(last.map((job) => job.id).sort()).toEqual([jobs.deploy.id, jobs.secondTie.id].sort());
      expect(last.find((job) => job.id === jobs.deploy.id)?.job_type).toBe('DEPLOY');
      const stranger = await suite.seedOwner();
      expect(await suite.asOwner(stranger.id, (stores) => stores.jobs.lastChangePerVine(stranger.id))).toEqual([]);
      expect(await suite.asOwner(stranger.id, (stores) => stores.jobs.lastChangePerVine(owner.id))).toEqual([]);
    });

    it('lists the DEPLOY jobs of a plan that are queued, running or succeeded; the newest of any status is its latest change', async () => {
      const owner = await suite.seedOwner();
      const jobs = await suite.asOwner(owner.id, async (stores) => {
        const plan = await stores.jobs.create(newJob(owner.id, owner.vine, { status: 'SUCCESS' }));
        const otherPlan = await stores.jobs.create(newJob(owner.id, owner.vine, { status: 'SUCCESS' }));
        const deploy = (status: Job['status'], planJobId = plan.id) =>
          stores.jobs.create(newJob(owner.id, owner.vine, { job_type: 'DEPLOY', status, plan_job_id: planJobId }));
        return {
          plan,
          queued: await deploy('QUEUED'),
          processing: await deploy('PROCESSING'),
          succeeded: await deploy('SUCCESS'),
          failed: await deploy('FAILED'),
          cancelled: await deploy('CANCELLED'),
          ofOtherPlan: await deploy('QUEUED', otherPlan.id),
        };
      });
      const deploys = await suite.asOwner(owner.id, (stores) => stores.jobs.listDeploysOfPlan(owner.id, jobs.plan.id));
      expect(deploys.map((job) => job.id).sort()).toEqual(
        [jobs.queued.id, jobs.processing.id, jobs.succeeded.id].sort(),
      );
      expect(deploys.find((job) => job.id === jobs.queued.id)).toEqual(jobs.queued);
      // The newest change of the plan, whatever its status (issue 27's apply phase).
      const latest = await suite.asOwner(owner.id, (stores) => stores.jobs.latestChangeOfPlan(owner.id, jobs.plan.id));
      expect(latest).toEqual(jobs.cancelled);
      expect(
        await suite.asOwner(owner.id, (stores) => stores.jobs.latestChangeOfPlan(owner.id, jobs.ofOtherPlan.id)),
      ).toBeNull();
      const stranger = await suite.seedOwner();
      expect(
        await suite.asOwner(stranger.id, (stores) => stores.jobs.listDeploysOfPlan(stranger.id, jobs.plan.id)),
      ).toEqual([]);
      expect(
        await suite.asOwner(stranger.id, (stores) => stores.jobs.latestChangeOfPlan(stranger.id, jobs.plan.id)),
      ).toBeNull();
    });
  });
}
