import type { UserActor } from '../../domain/actors.js';
import type { Job } from '../../domain/records.js';
import type { CoreDeps } from '../../usecases/CoreDeps.js';
import { TfeOrganizations } from '../TfeOrganizations.js';
import { runId } from './records.js';

/** A job of an organization's queue, as a run of the protocol (`GET /organizations/:org/runs/queue`). */
export interface QueuedRun {
  /** `run-<plan job id>`: a PLAN is its run; a DEPLOY/DESTROY of a plan, that plan's run's apply. */
  runId: string;
  job: Job;
  /** 1 for the first: the running jobs first (oldest claim first), then the queued (oldest first). */
  position: number;
}

/** The run a job belongs to: a plan's own, or for a change of a plan that plan's; a job without a plan, its own id. */
export function runIdOfJob(job: Pick<Job, 'id' | 'job_type' | 'plan_job_id'>): string {
  return runId(job.job_type !== 'PLAN' && job.plan_job_id !== null ? job.plan_job_id : job.id);
}

/**
 * The organization's run queue and capacity (issue 27): what the CLI asks while its run waits to
 * start, to print its place ("Waiting for N queued runs"). The queue is the organization's jobs
 * that are running or queued; capacity counts them.
 */
export class TfeRunQueueUseCases {
  private readonly orgs: TfeOrganizations;

  constructor(private readonly deps: Pick<CoreDeps, 'uow'>) {
    this.orgs = new TfeOrganizations(deps);
  }

  async queue(actor: UserActor, organization: unknown): Promise<QueuedRun[]> {
    const { running, queued } = await this.jobs(actor, organization);
    return [...running, ...queued].map((job, i) => ({ runId: runIdOfJob(job), job, position: i + 1 }));
  }

  async capacity(actor: UserActor, organization: unknown): Promise<{ name: string; pending: number; running: number }> {
    const org = await this.orgs.resolve(actor, organization, 'read');
    const { running, queued } = await this.jobs(actor, organization);
    return { name: org.name, pending: queued.length, running: running.length };
  }

  private async jobs(actor: UserActor, organization: unknown): Promise<{ running: Job[]; queued: Job[] }> {
    const org = await this.orgs.resolve(actor, organization, 'read');
    return this.deps.uow.read(org.scope, async (stores) => {
      const running = await stores.jobs.list(org.ownerId, { status: 'PROCESSING' });
      const queued = await stores.jobs.list(org.ownerId, { status: 'QUEUED' });
      const by = (time: (job: Job) => string) => (a: Job, b: Job) => time(a).localeCompare(time(b));
      return {
        running: running.sort(by((job) => job.claimed_at ?? job.created_at)),
        queued: queued.sort(by((job) => job.created_at)),
      };
    });
  }
}
