import { type EndReason, type JobStatus, systemScope } from '@trellis/core';
import { expect } from 'vitest';
import { seedVine, seedWorker } from '../../memory/builders.js';
import { type LifecycleWorld, type Observed, sha } from './world.js';

/**
 * One row of the lifecycle table: a job (`job`) brought to the moment before its end, the change
 * that ends it, and what that end must leave behind. `reasons` are the end reasons it shows;
 * every reason has a row.
 */
export interface LifecycleRow {
  name: string;
  reasons: EndReason[];
  /** Sets the scene; returns the change to observe. Name the jobs with `world.name`. */
  arrange(world: LifecycleWorld): Promise<() => Promise<unknown>>;
  /** The status of each named job after the change. */
  statuses: Record<string, JobStatus>;
  expected: Observed;
  /** Further checks after the change (a drift result, a worker). */
  also?(world: LifecycleWorld): Promise<void>;
}
import { changes, none, planBytes, queuedDriftCheck } from './rowKit.js';
import { MORE_LIFECYCLE_ROWS } from './moreRows.js';

export const LIFECYCLE_ROWS: LifecycleRow[] = [
  {
    name: "reported: a push's PLAN succeeded",
    reasons: ['reported'],
    async arrange(world) {
      const plan = await world.claim(await world.push(sha(1)));
      world.name(plan, 'job');
      return () => world.report(plan, 'SUCCESS', changes(1));
    },
    statuses: { job: 'SUCCESS' },
    expected: {
      ...none,
      deliveries: ['job.succeeded job'],
      vcs: ['status:success job'],
      announcements: ['SUCCESS job'],
    },
  },
  {
    name: "reported: a pull request's PLAN succeeded (its comment)",
    reasons: ['reported'],
    async arrange(world) {
      const plan = await world.claim(await world.pullRequest(sha(1)));
      world.name(plan, 'job');
      return () => world.report(plan, 'SUCCESS', changes(2));
    },
    statuses: { job: 'SUCCESS' },
    expected: {
      ...none,
      deliveries: ['job.succeeded job'],
      vcs: ['comment job', 'status:success job'],
      announcements: ['SUCCESS job'],
    },
  },
  {
    name: "reported: a person's DEPLOY succeeded (its outputs on the vine)",
    reasons: ['reported'],
    async arrange(world) {
      const deploy = await world.core.useCases.jobs.create(world.ada, {
        job_type: 'DEPLOY',
        configuration_id: world.vine.id,
      });
      world.name(await world.claim(deploy), 'job');
      return () => world.report(deploy, 'SUCCESS', { cluster_name: 'eks-prod', outputs: { region: 'eu-west-1' } });
    },
    statuses: { job: 'SUCCESS' },
    expected: { ...none, deliveries: ['job.succeeded job'], announcements: ['SUCCESS job'] },
    async also(world) {
      const vine = await world.core.useCases.vines.get(world.ada, world.vine.id);
      expect(vine.components.cluster?.name).toBe('eks-prod');
      expect(vine.status).toBe('DEPLOYED');
    },
  },
  {
    name: 'reported: a DESTROY succeeded (its components cleared)',
    reasons: ['reported'],
    async arrange(world) {
      const deploy = await world.core.useCases.jobs.create(world.ada, {
        job_type: 'DEPLOY',
        configuration_id: world.vine.id,
      });
      await world.report(await world.claim(deploy), 'SUCCESS', { cluster_name: 'eks-prod' });
      const destroy = await world.core.useCases.jobs.create(world.ada, {
        job_type: 'DESTROY',
        configuration_id: world.vine.id,
      });
      world.name(await world.claim(destroy), 'job');
      return () => world.report(destroy, 'SUCCESS');
    },
    statuses: { job: 'SUCCESS' },
    expected: { ...none, deliveries: ['job.succeeded job'], announcements: ['SUCCESS job'] },
    async also(world) {
      const vine = await world.core.useCases.vines.get(world.ada, world.vine.id);
      expect(vine.components.cluster).toBeNull();
      expect(vine.status).toBe('DESTROYED');
    },
  },
  {
    name: 'reported: a DESTROY_WORKER succeeded; agent_destroyed: the job it ran fails, the job assigned to it is cancelled',
    reasons: ['reported', 'agent_destroyed'],
    async arrange(world) {
      const doomed = await seedWorker(world.core, world.ada, { name: 'doomed', heartbeat: true });
      const running = await world.claim(await world.push(sha(1)), doomed);
      world.name(running, 'running');
      const other = await seedVine(world.core, world.ada, { name: 'other' });
      const assigned = await world.core.useCases.jobs.create(world.ada, {
        job_type: 'PLAN',
        configuration_id: other.id,
        assigned_worker_id: doomed.workerId,
      });
      world.name(assigned, 'assigned');
      const destroy = await world.core.useCases.jobs.create(world.ada, {
        job_type: 'DESTROY_WORKER',
        target_worker_id: doomed.workerId,
      });
      world.name(await world.claim(destroy), 'job');
      return () => world.report(destroy, 'SUCCESS');
    },
    statuses: { job: 'SUCCESS', running: 'FAILED', assigned: 'CANCELLED' },
    expected: {
      deliveries: ['job.cancelled assigned', 'job.failed running', 'job.succeeded job'],
      vcs: ['status:failure running'],
      announcements: ['FAILED running', 'CANCELLED assigned', 'credentials', 'SUCCESS job'],
      audit: ['job.cancel assigned', 'job.fail running'],
    },
    async also(world) {
      const vine = await world.core.useCases.vines.get(world.ada, world.vine.id);
      expect(vine).toMatchObject({ status: 'FAILED', status_message: 'the agent running this job was destroyed' });
    },
  },
  {
    name: 'reported: a drift check found drift (drift.detected, no job notification)',
    reasons: ['reported'],
    async arrange(world) {
      const check = await world.claim(await queuedDriftCheck(world));
      return () => world.report(check, 'SUCCESS', changes(0, 1));
    },
    statuses: { job: 'SUCCESS' },
    expected: { ...none, deliveries: ['drift.detected job'], announcements: ['SUCCESS job'] },
    async also(world) {
      const vine = await world.core.useCases.vines.get(world.ada, world.vine.id);
      expect(vine.drift).toMatchObject({ status: 'drifted', changes: { add: 0, change: 1, destroy: 0 } });
    },
  },
  {
    name: 'reported: a PLAN with changes on a vine that requires approval (plan.needs_approval)',
    reasons: ['reported'],
    async arrange(world) {
      await world.core.useCases.drift.configure(world.ada, world.vine.id, { approval: { required: true } });
      const plan = await world.core.useCases.jobs.create(world.ada, {
        job_type: 'PLAN',
        configuration_id: world.vine.id,
      });
      world.name(await world.claim(plan), 'job');
      return () => world.report(plan, 'SUCCESS', changes(1));
    },
    statuses: { job: 'SUCCESS' },
    expected: {
      ...none,
      deliveries: ['job.succeeded job', 'plan.needs_approval job'],
      announcements: ['SUCCESS job'],
    },
  },
  {
    name: "reported: a push's PLAN on a vine that auto-deploys queues its DEPLOY",
    reasons: ['reported'],
    async arrange(world) {
      await world.core.uow.run(systemScope, async (stores) => {
        const connection = await stores.vcs.get(world.ada.userId, world.vine.id);
        if (connection) await stores.vcs.put({ ...connection, auto_deploy: true });
      });
      const plan = await world.claim(await world.push(sha(1)));
      world.name(plan, 'job');
      await world.core.useCases.planArtifacts.upload(world.agent, plan.id, planBytes());
      return () => world.report(plan, 'SUCCESS', changes(1));
    },
    statuses: { job: 'SUCCESS' },
    expected: {
      deliveries: ['job.succeeded job'],
      vcs: ['status:pending new DEPLOY', 'status:success job'],
      announcements: ['queued new DEPLOY', 'SUCCESS job'],
      audit: ['job.create new DEPLOY'],
    },
  },
  {
    name: 'reported: a DEPLOY succeeded and a vine runs after it (run trigger)',
    reasons: ['reported'],
    async arrange(world) {
      const downstream = await seedVine(world.core, world.ada, { name: 'downstream' });
      await world.core.useCases.drift.configure(world.ada, downstream.id, { triggers: { after: [world.vine.id] } });
      const deploy = await world.core.useCases.jobs.create(world.ada, {
        job_type: 'DEPLOY',
        configuration_id: world.vine.id,
      });
      world.name(await world.claim(deploy), 'job');
      return () => world.report(deploy, 'SUCCESS');
    },
    statuses: { job: 'SUCCESS' },
    expected: {
      ...none,
      deliveries: ['job.succeeded job'],
      announcements: ['queued new PLAN', 'SUCCESS job'],
      audit: ['job.create new PLAN'],
    },
  },
  {
    name: "reported: a pull request's PLAN failed",
    reasons: ['reported'],
    async arrange(world) {
      const plan = await world.claim(await world.pullRequest(sha(1)));
      world.name(plan, 'job');
      return () =>
        world.core.useCases.jobs.reportStatus(world.agent, plan.id, { status: 'FAILED', error_message: 'boom' });
    },
    statuses: { job: 'FAILED' },
    expected: {
      ...none,
      deliveries: ['job.failed job'],
      vcs: ['comment job', 'status:failure job'],
      announcements: ['FAILED job'],
    },
  },
  ...MORE_LIFECYCLE_ROWS,
];
