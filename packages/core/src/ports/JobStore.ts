import type { OwnerIds } from './UnitOfWork.js';
import type { JobStatus, VineStatus } from '../domain/enums.js';
import type { Page, PageRequest } from '../domain/pagination.js';
import type { ClaimedPolicy, PlanApproval, PolicyOverride } from '../domain/policies.js';
import type { CloudIdentity, Job, JobSummary, Vineyard } from '../domain/records.js';

export interface JobFilter {
  status?: JobStatus;
  vineyard_id?: string;
  vine_id?: string;
}

export type JobPatch = Partial<
  Pick<
    Job,
    | 'status'
    | 'execution_metadata'
    | 'error_message'
    | 'finished_at'
    | 'vine_status_before'
    | 'claimed_by_worker_id'
    | 'claimed_at'
  >
>;

/** What `claimNext` took and read, in one step (on Postgres, one statement). */
export interface JobClaim {
  /** The claimed job; `vine_status_before` holds its vine's status when the claim moved the vine. */
  job: Job;
  /**
   * The job's vine as the claim found and left it (`JOB_CLAIM.vine`); null when the job has no
   * vine or its trigger leaves the vine alone. `after` is `before` when the vine was in a status
   * no job starts from: the claim did not move it, and the caller refuses the claim.
   */
  vine: { before: VineStatus; after: VineStatus } | null;
  /** The job's cloud identity (`job.cloud_identity_id`), or null. */
  cloud_identity: CloudIdentity | null;
  /** The job's vineyard (`job.vineyard_id`), or null. */
  vineyard: Vineyard | null;
}

/** A queued job and its place in its owner's queue (`JobStore.queue`). */
export interface QueuedJob {
  job: JobSummary;
  /** 1-based: the order the owner's agents claim the owner's queued jobs in. */
  position: number;
}

/** What `JobStore.queue` reads: a head of the queue, and the length of the whole. */
export interface JobQueue {
  jobs: QueuedJob[];
  /** Every queued job of those owners. */
  total: number;
}

/**
 * A queued job held for one agent for a short while (issue 31): a DEPLOY of a plan offered to the
 * agent that ran the plan, whose workspace and providers are warm. Until `until`, claims of the
 * owner's other agents pass over the job (they take other work); from `until` on, any agent may
 * take it. A job assigned to an agent keeps only that rule (`assigned_worker_id` wins).
 */
export interface JobOffer {
  worker_id: string;
  until: string;
}

export interface JobStore {
  /** Stores a new job; `offer`: held for that agent until its time (`claimNext`). */
  create(job: Job, offer?: JobOffer | null): Promise<Job>;
  get(ownerId: string, id: string): Promise<Job | null>;
  /**
   * The job, its row locked until the unit of work ends (`FOR UPDATE` on Postgres; SQLite and the
   * memory store serialize writers anyway): a concurrent unit of work that changes or locks it
   * waits, and this one, if it waited, reads the job as the other left it. The deploy gate and
   * the plan decisions lock the plan, so a rejection and a DEPLOY of the plan never both pass.
   */
  getForUpdate(ownerId: string, id: string): Promise<Job | null>;
  /** Newest first. */
  list(ownerId: string, filter?: JobFilter): Promise<Job[]>;
  /**
   * One page, newest first (by `created_at`, then insertion), as summaries: the snapshots come
   * without inline files and variables (`summarizeSnapshot`), so a page never carries them.
   */
  page(owners: OwnerIds, request: PageRequest, filter?: JobFilter): Promise<Page<JobSummary>>;
  /**
   * Atomically takes the oldest `QUEUED` job the worker may run (DESIGN §3): same owner,
   * assigned to nobody or to it, the oldest queued job of its vine, and no job of that vine in
   * `PROCESSING`, and not offered to another agent until after `at` (`JobOffer`; an assigned job
   * ignores its offer). The job comes back `PROCESSING`, claimed by the worker at `at`, and its vine
   * moved as core's `JOB_CLAIM` says, in the same step, with what the claim's answer needs. Two
   * callers never get the same job, nor two jobs of one vine at once.
   */
  claimNext(worker: { id: string; owner_id: string }, at: string): Promise<JobClaim | null>;
  /**
   * The owners' `QUEUED` jobs in the order their agents claim them (issue 29), each with its
   * `position` in its owner's queue: 1 is what the owner's next claim takes, and draining the queue
   * claim by claim (each job ending before the next claim) takes them in position order. The
   * order is the claim's own (`claimNext`: a DEPLOY of a plan at its plan's place, jobs of one vine
   * one at a time in the order they were queued), never a copy of it. The first `limit` by
   * position (owners interleaved, longest-queued first), and how many are queued in all.
   */
  queue(owners: OwnerIds, limit: number): Promise<JobQueue>;
  /** The job's `position` in its owner's queue, as `queue` gives it; null when it is not queued. */
  queuePosition(ownerId: string, id: string): Promise<number | null>;
  /** Applies `patch` only if the job is still in `expected`; null when it is not (lost race). */
  update(ownerId: string, id: string, expected: JobStatus, patch: JobPatch): Promise<Job | null>;
  /** `PROCESSING` jobs (any owner) whose claiming worker was last heard of before `cutoff`. */
  listLost(cutoff: string): Promise<Job[]>;
  /** Ids of `CANCELLED` jobs claimed by the worker that finished at or after `since`. */
  listCancelledForWorker(ownerId: string, workerId: string, since: string): Promise<string[]>;
  /** Ids of workers of the owner that have a `PROCESSING` job. */
  busyWorkerIds(ownerId: string): Promise<string[]>;
  /**
   * The offers standing at `at` among the owner's jobs `ids` (by job id): those of jobs still
   * `QUEUED`, assigned to nobody, whose time has not come (`JobOffer`). For people only (why a job
   * waits); the claim applies its own rule.
   */
  standingOffers(ownerId: string, ids: readonly string[], at: string): Promise<Map<string, JobOffer>>;
  /**
   * Records a person's approval or rejection of a plan, only if it has none yet: of two racing
   * deciders one wins. Null when the job already has a decision (or does not exist).
   */
  setApproval(ownerId: string, id: string, approval: PlanApproval): Promise<Job | null>;
  /** Records an override of the plan's failed policies, only if it has none yet; null otherwise. */
  setPolicyOverride(ownerId: string, id: string, override: PolicyOverride): Promise<Job | null>;
  /** Records the policy versions the job's claim carried (issue 23), in the claim's unit of work. */
  recordClaimedPolicies(ownerId: string, id: string, policies: ClaimedPolicy[]): Promise<void>;
  /** The jobs that apply the plan (a DEPLOY, or a DESTROY of a destroy plan) and are queued, running or succeeded. */
  listDeploysOfPlan(ownerId: string, planJobId: string): Promise<Job[]>;
  /**
   * The newest job that applies the plan (a DEPLOY or DESTROY of it), whatever its status: the
   * apply phase of a run of the Terraform Cloud protocol (issue 27). Null when there is none.
   */
  latestChangeOfPlan(ownerId: string, planJobId: string): Promise<Job | null>;
  /**
   * For each vine of the owner, its newest succeeded PLAN or DEPLOY, a pull request's plan passed
   * over (another branch's): what the vine last planned or deployed (issue 28's module usage). In
   * one statement, whatever the number of vines and jobs; in no particular order.
   */
  lastChangePerVine(ownerId: string): Promise<JobSummary[]>;
}
