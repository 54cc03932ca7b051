import {
  ConflictError,
  JOB_CLAIM,
  type Job,
  type JobClaim,
  type JobOffer,
  type JobFilter,
  type JobQueue,
  type JobPatch,
  type JobStatus,
  type JobStore,
  type JobSummary,
  jobSummary,
  type Page,
  type PageRequest,
  PLAN_HOLDING_DEPLOY_STATUSES,
  type PlanApproval,
  type PolicyOverride,
  type ClaimedPolicy,
  type VineJobType,
} from '@trellis/core';
import { copy, newestFirst, oldestFirst, pageNewestFirst } from '../MemoryState.js';
import { ownerList, type OwnerIds } from '@trellis/core';
import type { MemoryTransaction } from '../MemoryTransaction.js';

const PATCHABLE = [
  'status',
  'execution_metadata',
  'error_message',
  'finished_at',
  'vine_status_before',
  'claimed_by_worker_id',
  'claimed_at',
] as const;

export class MemoryJobStore implements JobStore {
  constructor(private readonly tx: MemoryTransaction) {}

  async create(job: Job, offer: JobOffer | null = null): Promise<Job> {
    const { jobs, jobOffers } = this.tx.state;
    this.tx.checkWrite('jobs', job.owner_id);
    if (jobs.has(job.id)) throw new ConflictError('job_exists', 'a job with this id exists');
    jobs.set(job.id, copy(job));
    if (offer) jobOffers.set(job.id, copy(offer));
    return copy(job);
  }

  async get(ownerId: string, id: string): Promise<Job | null> {
    const job = this.owned(ownerId, id);
    return job ? copy(job) : null;
  }

  /** Units of work are serialized: there is nothing to lock. */
  async getForUpdate(ownerId: string, id: string): Promise<Job | null> {
    return this.get(ownerId, id);
  }

  async list(ownerId: string, filter: JobFilter = {}): Promise<Job[]> {
    const matching = this.ownedJobs(ownerId).filter((job) => matches(job, filter));
    return newestFirst(matching, (job) => job.created_at).map(copy);
  }

  async page(owners: OwnerIds, request: PageRequest, filter: JobFilter = {}): Promise<Page<JobSummary>> {
    const visible = ownerList(owners).filter((owner) => this.tx.sees(owner));
    const page = pageNewestFirst(
      this.tx.state.jobs,
      (job) => visible.includes(job.owner_id) && matches(job, filter),
      (job) => job.created_at,
      request,
    );
    return { items: page.items.map(jobSummary), next: page.next };
  }

  /**
   * The claim rule of DESIGN §3: of the owner's queued jobs, the oldest one (a DEPLOY of a plan
   * counts as old as its plan) that is assigned to
   * nobody or to this worker, does not target this worker, is not offered to another worker until
   * after `at` (`JobOffer`, m057), is the oldest queued job of its vine
   * and whose vine has nothing in `PROCESSING`. Units of work are serialized, so it is atomic.
   */
  async claimNext(worker: { id: string; owner_id: string }, at: string): Promise<JobClaim | null> {
    const next = nextClaimable(
      this.ownedJobs(worker.owner_id),
      (job) => job.status,
      (job) =>
        (job.assigned_worker_id === null || job.assigned_worker_id === worker.id) &&
        job.target_worker_id !== worker.id &&
        this.offeredTo(job, worker.id, at),
    );
    if (!next) return null;
    next.status = JOB_CLAIM.to;
    next.claimed_by_worker_id = worker.id;
    next.claimed_at = at;
    const { vines, cloudIdentities, vineyards } = this.tx.state;
    const vine = next.vine_id === null ? undefined : vines.get(next.vine_id);
    let move: JobClaim['vine'] = null;
    if (vine && !JOB_CLAIM.vineKeptBy.includes(next.trigger.type)) {
      const after = JOB_CLAIM.vine[next.job_type as VineJobType][vine.status] ?? vine.status;
      move = { before: vine.status, after };
      if (after !== vine.status) {
        next.vine_status_before = vine.status;
        vine.status = after;
        vine.status_message = null;
        vine.updated_at = at;
      }
    }
    const identity = next.cloud_identity_id === null ? undefined : cloudIdentities.get(next.cloud_identity_id);
    const vineyard = next.vineyard_id === null ? undefined : vineyards.get(next.vineyard_id);
    return {
      job: copy(next),
      vine: move,
      cloud_identity: identity ? copy(identity) : null,
      vineyard: vineyard ? copy(vineyard) : null,
    };
  }

  /** Whether `worker` may take `job` at `at` as far as an offer goes (`JobOffer`: another agent's until its time). */
  private offeredTo(job: Job, workerId: string, at: string): boolean {
    const offer = this.tx.state.jobOffers.get(job.id);
    return (
      offer === undefined ||
      job.assigned_worker_id !== null ||
      offer.worker_id === workerId ||
      Date.parse(offer.until) <= Date.parse(at)
    );
  }

  /**
   * The claim itself, replayed: the owner's queue drained claim by claim, each job ending before
   * the next claim (so no vine is busy), by `nextClaimable` as `claimNext` uses it.
   */
  async queue(owners: OwnerIds, limit: number): Promise<JobQueue> {
    const queued = ownerList(owners).flatMap((ownerId) => this.drained(ownerId).map((job, index) => ({ job, index })));
    const inOrder = oldestFirst(queued, (entry) => entry.job.created_at).sort((a, b) => a.index - b.index);
    return {
      jobs: inOrder.slice(0, limit).map((entry) => ({ job: jobSummary(copy(entry.job)), position: entry.index + 1 })),
      total: inOrder.length,
    };
  }

  async queuePosition(ownerId: string, id: string): Promise<number | null> {
    const index = this.drained(ownerId).findIndex((job) => job.id === id);
    return index < 0 ? null : index + 1;
  }

  /** The owner's queued jobs in the order claims take them when each ends before the next claim. */
  private drained(ownerId: string): Job[] {
    const own = this.ownedJobs(ownerId);
    const taken = new Set<string>();
    const statusOf = (job: Job): JobStatus =>
      job.status === JOB_CLAIM.from ? (taken.has(job.id) ? 'SUCCESS' : JOB_CLAIM.from) : 'SUCCESS';
    const order: Job[] = [];
    for (let next = nextClaimable(own, statusOf, () => true); next; next = nextClaimable(own, statusOf, () => true)) {
      taken.add(next.id);
      order.push(next);
    }
    return order;
  }

  async update(ownerId: string, id: string, expected: JobStatus, patch: JobPatch): Promise<Job | null> {
    const job = this.owned(ownerId, id);
    if (!job || job.status !== expected) return null;
    for (const key of PATCHABLE) {
      const value = patch[key];
      if (value !== undefined) (job as Record<(typeof PATCHABLE)[number], unknown>)[key] = copy(value);
    }
    return copy(job);
  }

  /**
   * As the SQL stores: a worker was last heard of at its last heartbeat or when it claimed the
   * job, whichever is later; a job lost is one whose worker was heard of by neither since the
   * cutoff. Oldest inserted first.
   */
  async listLost(cutoff: string): Promise<Job[]> {
    const { workers } = this.tx.state;
    const cutoffMs = Date.parse(cutoff);
    const silentSince = (time: string | null) => time === null || Date.parse(time) < cutoffMs;
    const lost = [...this.tx.state.jobs.values()].filter((job) => {
      if (job.status !== 'PROCESSING' || !this.tx.sees(job.owner_id)) return false;
      const worker = job.claimed_by_worker_id === null ? undefined : workers.get(job.claimed_by_worker_id);
      return worker !== undefined && silentSince(worker.last_heartbeat) && silentSince(job.claimed_at);
    });
    return lost.map(copy);
  }

  async listCancelledForWorker(ownerId: string, workerId: string, since: string): Promise<string[]> {
    const sinceMs = Date.parse(since);
    const cancelled = this.ownedJobs(ownerId).filter(
      (job) =>
        job.status === 'CANCELLED' &&
        job.claimed_by_worker_id === workerId &&
        job.finished_at !== null &&
        Date.parse(job.finished_at) >= sinceMs,
    );
    return oldestFirst(cancelled, (job) => job.finished_at as string).map((job) => job.id);
  }

  async standingOffers(ownerId: string, ids: readonly string[], at: string): Promise<Map<string, JobOffer>> {
    const standing = new Map<string, JobOffer>();
    for (const id of ids) {
      const job = this.tx.state.jobs.get(id);
      const offer = this.tx.state.jobOffers.get(id);
      if (!job || !offer || job.owner_id !== ownerId || !this.tx.sees(ownerId)) continue;
      if (job.status !== 'QUEUED' || job.assigned_worker_id !== null) continue;
      if (Date.parse(offer.until) > Date.parse(at)) standing.set(id, copy(offer));
    }
    return standing;
  }

  async busyWorkerIds(ownerId: string): Promise<string[]> {
    const ids = new Set<string>();
    for (const job of this.ownedJobs(ownerId)) {
      if (job.status === 'PROCESSING' && job.claimed_by_worker_id !== null) ids.add(job.claimed_by_worker_id);
    }
    return [...ids];
  }

  async setApproval(ownerId: string, id: string, approval: PlanApproval): Promise<Job | null> {
    const job = this.owned(ownerId, id);
    if (!job || job.approval !== null) return null;
    this.tx.checkWrite('jobs', ownerId);
    job.approval = copy(approval);
    return copy(job);
  }

  async setPolicyOverride(ownerId: string, id: string, override: PolicyOverride): Promise<Job | null> {
    const job = this.owned(ownerId, id);
    if (!job || job.policy_override !== null) return null;
    this.tx.checkWrite('jobs', ownerId);
    job.policy_override = copy(override);
    return copy(job);
  }

  async recordClaimedPolicies(ownerId: string, id: string, policies: ClaimedPolicy[]): Promise<void> {
    const job = this.owned(ownerId, id);
    if (!job) return;
    this.tx.checkWrite('jobs', ownerId);
    job.claimed_policies = copy(policies);
  }

  async listDeploysOfPlan(ownerId: string, planJobId: string): Promise<Job[]> {
    const deploys = this.ownedJobs(ownerId).filter(
      (job) =>
        (job.job_type === 'DEPLOY' || job.job_type === 'DESTROY') &&
        job.plan_job_id === planJobId &&
        PLAN_HOLDING_DEPLOY_STATUSES.includes(job.status),
    );
    return newestFirst(deploys, (job) => job.created_at).map(copy);
  }

  async latestChangeOfPlan(ownerId: string, planJobId: string): Promise<Job | null> {
    const changes = this.ownedJobs(ownerId).filter(
      (job) => (job.job_type === 'DEPLOY' || job.job_type === 'DESTROY') && job.plan_job_id === planJobId,
    );
    const newest = newestFirst(changes, (job) => job.created_at)[0];
    return newest ? copy(newest) : null;
  }

  async lastChangePerVine(ownerId: string): Promise<JobSummary[]> {
    const changes = this.ownedJobs(ownerId).filter(
      (job) =>
        job.vine_id !== null &&
        job.status === 'SUCCESS' &&
        (job.job_type === 'PLAN' || job.job_type === 'DEPLOY') &&
        job.trigger.type !== 'pull_request',
    );
    const last = new Map<string, Job>();
    for (const job of newestFirst(changes, (change) => change.created_at)) {
      if (!last.has(job.vine_id as string)) last.set(job.vine_id as string, job);
    }
    return [...last.values()].map((job) => jobSummary(copy(job)));
  }

  private owned(ownerId: string, id: string): Job | undefined {
    const job = this.tx.state.jobs.get(id);
    return job && job.owner_id === ownerId && this.tx.sees(ownerId) ? job : undefined;
  }

  private ownedJobs(ownerId: string): Job[] {
    if (!this.tx.sees(ownerId)) return [];
    return [...this.tx.state.jobs.values()].filter((job) => job.owner_id === ownerId);
  }
}

/**
 * The claim rule of DESIGN §3, over one owner's jobs as `statusOf` sees them: of the queued jobs,
 * the oldest one (a DEPLOY of a plan counts as old as its plan, m055) that the worker `mayTake`,
 * that is the oldest queued job of its vine, and whose vine has nothing in `PROCESSING`.
 */
function nextClaimable(
  ownerJobs: readonly Job[],
  statusOf: (job: Job) => JobStatus,
  mayTake: (job: Job) => boolean,
): Job | undefined {
  const ownJobs = oldestFirst(ownerJobs, (job) => job.created_at);
  const busyVines = new Set(ownJobs.filter((job) => statusOf(job) === JOB_CLAIM.to).map((job) => job.vine_id));
  const headOfVine = new Map<string, string>();
  for (const job of ownJobs) {
    if (statusOf(job) === JOB_CLAIM.from && job.vine_id !== null && !headOfVine.has(job.vine_id)) {
      headOfVine.set(job.vine_id, job.id);
    }
  }
  // A run keeps its place in the queue: a DEPLOY of a plan is offered at its plan's (m055).
  const created = new Map(ownJobs.map((job) => [job.id, job.created_at]));
  const placeInQueue = (job: Job) =>
    (job.plan_job_id === null ? undefined : created.get(job.plan_job_id)) ?? job.created_at;
  return oldestFirst(ownJobs, placeInQueue).find(
    (job) =>
      statusOf(job) === JOB_CLAIM.from &&
      mayTake(job) &&
      (job.vine_id === null || (headOfVine.get(job.vine_id) === job.id && !busyVines.has(job.vine_id))),
  );
}

function matches(job: Job, filter: JobFilter): boolean {
  return (
    (filter.status === undefined || job.status === filter.status) &&
    (filter.vineyard_id === undefined || job.vineyard_id === filter.vineyard_id) &&
    (filter.vine_id === undefined || job.vine_id === filter.vine_id)
  );
}
