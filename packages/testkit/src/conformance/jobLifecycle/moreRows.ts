import { ownerScope, systemScope, UnavailableError } from '@trellis/core';
import { expect } from 'vitest';
import { seedUser } from '../../memory/builders.js';
import { queueGitJob } from '../../gitJobs.js';
import { sha } from './world.js';
import { breakSigner, federatedVine, none, queuedDriftCheck } from './rowKit.js';
import type { LifecycleRow } from './rows.js';

/** The second half of the lifecycle table (`LIFECYCLE_ROWS`). */
export const MORE_LIFECYCLE_ROWS: LifecycleRow[] = [
  {
    name: "reported: the agent cancelled a push's PLAN",
    reasons: ['reported'],
    async arrange(world) {
      const plan = await world.claim(await world.push(sha(1)));
      world.name(plan, 'job');
      return () => world.report(plan, 'CANCELLED');
    },
    statuses: { job: 'CANCELLED' },
    expected: {
      ...none,
      deliveries: ['job.cancelled job'],
      vcs: ['status:error job'],
      announcements: ['CANCELLED job'],
    },
  },
  {
    name: "start_failed: the identity token of a push's PLAN could not be issued at its claim",
    reasons: ['start_failed'],
    async arrange(world) {
      const vine = await federatedVine(world);
      const plan = await queueGitJob(world.core.uow, world.core.deps, {
        ownerId: world.ada.userId,
        vineId: vine.id,
        trigger: world.pushTrigger(sha(1)),
      });
      world.name(plan, 'job');
      breakSigner(world);
      return () => expect(world.core.useCases.jobs.claim(world.agent)).rejects.toThrow('signer down');
    },
    statuses: { job: 'FAILED' },
    expected: {
      deliveries: ['job.failed job'],
      vcs: ['status:failure job'],
      announcements: ['PROCESSING job', 'FAILED job'],
      audit: ['job.fail job'],
    },
  },
  {
    name: "source_unavailable: the commit of a push's PLAN could not be fetched at its claim",
    reasons: ['source_unavailable'],
    async arrange(world) {
      world.api.fail.fetchArchive = new UnavailableError('provider_unavailable', 'GitHub answered 502');
      const plan = await world.push(sha(1));
      world.name(plan, 'job');
      return () => expect(world.core.useCases.jobs.claim(world.agent)).resolves.toBeNull();
    },
    statuses: { job: 'FAILED' },
    expected: {
      deliveries: ['job.failed job'],
      vcs: ['status:failure job'],
      announcements: ['PROCESSING job', 'FAILED job'],
      audit: ['job.fail job'],
    },
  },
  {
    name: 'agent_outdated: a PLAN with run options, claimed by an agent that does not name them',
    reasons: ['agent_outdated'],
    async arrange(world) {
      const plan = await world.core.useCases.jobs.create(world.ada, {
        job_type: 'PLAN',
        configuration_id: world.vine.id,
        run_options: { target: ['terraform_data.a'] },
      });
      world.name(plan, 'job');
      return () => expect(world.core.useCases.jobs.claim(world.agent)).resolves.toBeNull();
    },
    statuses: { job: 'FAILED' },
    expected: {
      ...none,
      deliveries: ['job.failed job'],
      announcements: ['PROCESSING job', 'FAILED job'],
      audit: ['job.fail job'],
    },
  },
  {
    name: "needs_reconnect: the person who connected the vine can no longer lend their token, so the push's PLAN fails",
    reasons: ['needs_reconnect'],
    async arrange(world) {
      const bob = await seedUser(world.core, { email: 'bob@example.test' });
      await world.core.uow.run(systemScope, async (stores) => {
        const connection = await stores.vcs.get(world.vine.owner_id, world.vine.id);
        if (connection) await stores.vcs.put({ ...connection, connected_by: bob.userId });
      });
      const plan = await world.push(sha(1));
      world.name(plan, 'job');
      return () => expect(world.core.useCases.jobs.claim(world.agent)).resolves.toBeNull();
    },
    statuses: { job: 'FAILED' },
    expected: {
      deliveries: ['job.failed job'],
      vcs: ['status:failure job'],
      announcements: ['PROCESSING job', 'FAILED job'],
      audit: ['job.fail job'],
    },
  },
  {
    name: 'start_failed: a drift check that could not start leaves its result',
    reasons: ['start_failed'],
    async arrange(world) {
      const vine = await federatedVine(world);
      await world.succeed('DEPLOY', vine);
      const check = await world.core.useCases.drift.checkNow(world.ada, vine.id);
      world.name(check, 'job');
      breakSigner(world);
      return () => expect(world.core.useCases.jobs.claim(world.agent)).rejects.toThrow('signer down');
    },
    statuses: { job: 'FAILED' },
    expected: {
      ...none,
      deliveries: ['job.failed job'],
      announcements: ['PROCESSING job', 'FAILED job'],
      audit: ['job.fail job'],
    },
    async also(world) {
      const vine = (await world.core.useCases.vines.list(world.ada)).items.find((v) => v.name === 'federated');
      expect(vine?.drift).toMatchObject({ status: 'unknown', error: expect.stringContaining('identity token') });
    },
  },
  {
    name: "agent_lost: the agent running a push's PLAN went silent",
    reasons: ['agent_lost'],
    async arrange(world) {
      const plan = await world.claim(await world.push(sha(1)));
      world.name(plan, 'job');
      await world.core.useCases.states.lock(world.agent, world.vine.id, { ID: 'held', Who: 'tofu@agent' });
      world.core.clock.advance({ seconds: world.core.settings.lostJobTimeoutSeconds + 1 });
      return () => world.core.useCases.jobs.sweepLostJobs();
    },
    statuses: { job: 'FAILED' },
    expected: {
      deliveries: ['job.failed job'],
      vcs: ['status:error job'],
      announcements: ['FAILED job'],
      audit: ['job.fail job'],
    },
    async also(world) {
      // Its engine can never release the state lock: the end does.
      const lock = await world.core.uow.read(ownerScope(world.ada.userId), (stores) =>
        stores.states.getLock(world.ada.userId, world.vine.id),
      );
      expect(lock).toBeNull();
    },
  },
  {
    name: "agent_restarted: the agent running a push's PLAN started again, running nothing",
    reasons: ['agent_restarted'],
    async arrange(world) {
      const plan = await world.claim(await world.push(sha(1)));
      world.name(plan, 'job');
      await world.core.useCases.states.lock(world.agent, world.vine.id, { ID: 'held', Who: 'tofu@agent' });
      return () => world.core.useCases.workers.heartbeat(world.agent, { version: '2.0.0', running_job_ids: [] });
    },
    statuses: { job: 'FAILED' },
    expected: {
      deliveries: ['job.failed job'],
      vcs: ['status:failure job'],
      announcements: ['FAILED job'],
      audit: ['job.fail job'],
    },
    async also(world) {
      // Its engine died with the old process: the end releases the lock it held.
      const lock = await world.core.uow.read(ownerScope(world.ada.userId), (stores) =>
        stores.states.getLock(world.ada.userId, world.vine.id),
      );
      expect(lock).toBeNull();
    },
  },
  {
    name: "requeued: the agent never got the answer to its claim of a push's PLAN, so it goes back in the queue",
    reasons: [],
    async arrange(world) {
      const plan = await world.claim(await world.push(sha(1)));
      world.name(plan, 'job');
      return () =>
        world.core.useCases.workers.heartbeat(world.agent, {
          version: '2.0.0',
          running_job_ids: [],
          after_unanswered_claim: true,
        });
    },
    statuses: { job: 'QUEUED' },
    // No end: nothing is delivered and the commit keeps its `pending` status; idle agents wake up.
    expected: { deliveries: [], vcs: [], announcements: ['queued job'], audit: ['job.requeue job'] },
    async also(world) {
      // The claim is undone: no agent, its vine where it was, and the next claim takes it.
      const [job, vine] = await world.core.uow.read(ownerScope(world.ada.userId), async (stores) => [
        await stores.jobs.list(world.ada.userId, { vine_id: world.vine.id, status: 'QUEUED' }),
        await stores.vines.get(world.ada.userId, world.vine.id),
      ]);
      expect(job).toHaveLength(1);
      expect(job[0]).toMatchObject({ claimed_by_worker_id: null, claimed_at: null, vine_status_before: null });
      expect(vine?.status).toBe(world.vine.status);
      const again = await world.core.useCases.jobs.claim(world.agent);
      expect(again?.job.id).toBe(job[0]?.id);
    },
  },
  {
    name: "cancelled_by_person: a queued push's PLAN",
    reasons: ['cancelled_by_person'],
    async arrange(world) {
      const plan = await world.push(sha(1));
      world.name(plan, 'job');
      return () => world.core.useCases.jobs.cancel(world.ada, plan.id);
    },
    statuses: { job: 'CANCELLED' },
    expected: {
      deliveries: ['job.cancelled job'],
      vcs: ['status:error job'],
      announcements: ['CANCELLED job'],
      audit: ['job.cancel job'],
    },
  },
  {
    name: "cancelled_by_person: a running push's PLAN",
    reasons: ['cancelled_by_person'],
    async arrange(world) {
      const plan = await world.claim(await world.push(sha(1)));
      world.name(plan, 'job');
      return () => world.core.useCases.jobs.cancel(world.ada, plan.id);
    },
    statuses: { job: 'CANCELLED' },
    expected: {
      deliveries: ['job.cancelled job'],
      vcs: ['status:error job'],
      announcements: ['CANCELLED job'],
      audit: ['job.cancel job'],
    },
  },
  {
    name: 'superseded: a newer commit of a pull request cancels its queued plan',
    reasons: ['superseded'],
    async arrange(world) {
      world.name(await world.pullRequest(sha(1)), 'job');
      return () => world.pullRequest(sha(2), 'updated');
    },
    statuses: { job: 'CANCELLED' },
    expected: {
      deliveries: ['job.cancelled job'],
      vcs: ['status:error job', 'status:pending new PLAN'],
      announcements: ['CANCELLED job', 'queued new PLAN'],
      audit: ['job.cancel job', 'job.create new PLAN'],
    },
  },
  {
    name: "gave_way: a queued drift check gives way to a person's job",
    reasons: ['gave_way'],
    async arrange(world) {
      await queuedDriftCheck(world);
      return () => world.core.useCases.jobs.create(world.ada, { job_type: 'PLAN', configuration_id: world.vine.id });
    },
    statuses: { job: 'CANCELLED' },
    expected: {
      ...none,
      announcements: ['CANCELLED job', 'queued new PLAN'],
      audit: ['job.cancel job', 'job.create new PLAN'],
    },
  },
];
