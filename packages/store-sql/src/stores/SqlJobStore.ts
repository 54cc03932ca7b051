import {
  type ConfigSnapshot,
  JOB_CLAIM,
  type Job,
  type JobClaim,
  type JobOffer,
  type JobFilter,
  type JobQueue,
  type JobPatch,
  type JobStatus,
  type JobTrigger,
  type JobStore,
  type JobSummary,
  type JobType,
  type JsonObject,
  type Page,
  type PageRequest,
  PLAN_HOLDING_DEPLOY_STATUSES,
  type PlanApproval,
  type PolicyOverride,
  type ClaimedPolicy,
  type SnapshotSummary,
  summarizeSnapshot,
  type VineStatus,
} from '@trellis/core';
import { ownerList, type OwnerIds } from '@trellis/core';
import type { Knex } from 'knex';
import type { SqlSession } from '../dialects/Dialect.js';
import {
  jsonIn,
  jsonOut,
  type Row,
  textOut,
  textOutOrNull,
  timeIn,
  timeInOrNull,
  timeOut,
  timeOutOrNull,
  uuidOut,
  uuidOutOrNull,
} from '../rows.js';
import { queuePositionsSql } from './jobQueue.js';
import { keysetPageOfOwners } from './keysetPage.js';
import { toCloudIdentity } from './SqlCloudIdentityStore.js';
import { toVineyard } from './SqlVineyardStore.js';

export class SqlJobStore implements JobStore {
  /**
   * The snapshots this unit of work has read or stored, by owner and hash: content-addressed, so
   * a job read again (the report that ends it, the apply queued of its plan, which has the same
   * hash) takes its snapshot from here instead of another statement, and one stored is not
   * inserted again. Shared by the jobs it returns, as one list's jobs of one hash always were.
   */
  private readonly snapshots = new Map<string, ConfigSnapshot>();

  constructor(private readonly db: SqlSession) {}

  /** The full snapshot goes to `config_snapshots` once per owner and hash; the job keeps its summary. */
  async create(job: Job, offer: JobOffer | null = null): Promise<Job> {
    const key = snapshotKey(job.owner_id, job.config_hash);
    if (!this.snapshots.has(key)) {
      await this.db
        .insert('config_snapshots', {
          owner_id: job.owner_id,
          config_hash: job.config_hash,
          snapshot: jsonIn(job.config_snapshot),
        })
        .onConflict(['owner_id', 'config_hash'])
        .ignore();
      this.snapshots.set(key, job.config_snapshot);
    }
    const [row] = await this.db
      .insert('jobs', {
        id: job.id,
        owner_id: job.owner_id,
        job_type: job.job_type,
        status: job.status,
        config_snapshot: jsonIn(summarizeSnapshot(job.config_snapshot)),
        config_hash: job.config_hash,
        vine_id: job.vine_id,
        vineyard_id: job.vineyard_id,
        cloud_identity_id: job.cloud_identity_id,
        assigned_worker_id: job.assigned_worker_id,
        claimed_by_worker_id: job.claimed_by_worker_id,
        plan_job_id: job.plan_job_id,
        target_worker_id: job.target_worker_id,
        execution_metadata: jsonIn(job.execution_metadata),
        error_message: job.error_message,
        vine_status_before: job.vine_status_before,
        // Null (or, before m012, absent) reads as a manual job.
        ...(job.trigger.type === 'manual' ? {} : { trigger: jsonIn(job.trigger) }),
        // Written only when set, so the store still seeds schemas from before m016.
        ...(job.created_by === null ? {} : { created_by: job.created_by }),
        ...(job.caused_by === null ? {} : { caused_by: job.caused_by }),
        ...(job.claimed_policies === null ? {} : { claimed_policies: jsonIn(job.claimed_policies) }),
        ...(job.approval === null ? {} : { approval: jsonIn(job.approval) }),
        ...(job.policy_override === null ? {} : { policy_override: jsonIn(job.policy_override) }),
        created_at: timeIn(job.created_at),
        claimed_at: timeInOrNull(job.claimed_at),
        finished_at: timeInOrNull(job.finished_at),
        // Written only when set (m057), as the columns above it.
        ...(offer === null ? {} : { offered_worker_id: offer.worker_id, offered_until: timeIn(offer.until) }),
      })
      .returning('*');
    return { ...toJobSummary(row), config_snapshot: job.config_snapshot };
  }

  /**
   * The job and its full snapshot in one statement (a join on the snapshot's key): the run, plan
   * and log reads of the stock CLI's polling read a job each time.
   */
  async get(ownerId: string, id: string): Promise<Job | null> {
    return this.joined(this.withJoinedSnapshot(ownerId, id));
  }

  /** As `get`, the job's row locked (`FOR UPDATE OF jobs`): still one statement. */
  async getForUpdate(ownerId: string, id: string): Promise<Job | null> {
    return this.joined(this.db.lockForUpdate(this.withJoinedSnapshot(ownerId, id), 'jobs'));
  }

  private withJoinedSnapshot(ownerId: string, id: string): Knex.QueryBuilder {
    return this.db
      .table('jobs')
      .leftJoin('config_snapshots', (on) =>
        on.on('config_snapshots.owner_id', 'jobs.owner_id').andOn('config_snapshots.config_hash', 'jobs.config_hash'),
      )
      .where({ 'jobs.owner_id': ownerId, 'jobs.id': id });
  }

  private async joined(query: Knex.QueryBuilder): Promise<Job | null> {
    const row: Row | undefined = await query.first('jobs.*', `config_snapshots.snapshot as ${JOINED_SNAPSHOT}`);
    if (!row) return null;
    const summary = toJobSummary(row);
    if (row[JOINED_SNAPSHOT] === null || row[JOINED_SNAPSHOT] === undefined) {
      throw new Error(`job ${summary.id} has no stored snapshot ${summary.config_hash}`);
    }
    const key = snapshotKey(summary.owner_id, summary.config_hash);
    const snapshot = this.snapshots.get(key) ?? jsonOut<ConfigSnapshot>(row[JOINED_SNAPSHOT]);
    this.snapshots.set(key, snapshot);
    return { ...summary, config_snapshot: snapshot };
  }

  async list(ownerId: string, filter: JobFilter = {}): Promise<Job[]> {
    const rows: Row[] = await this.filtered(ownerId, filter).orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'seq', order: 'desc' },
    ]);
    return this.withSnapshots(rows);
  }

  /** Reads the jobs rows alone: their summaries are all a page shows. */
  async page(owners: OwnerIds, request: PageRequest, filter: JobFilter = {}): Promise<Page<JobSummary>> {
    return keysetPageOfOwners(
      ownerList(owners),
      (ownerId) => this.filtered(ownerId, filter),
      'created_at',
      request,
      toJobSummary,
    );
  }

  private filtered(owners: OwnerIds, filter: JobFilter) {
    const query = this.db.table('jobs').whereIn('owner_id', ownerList(owners));
    if (filter.status !== undefined) query.where({ status: filter.status });
    if (filter.vineyard_id !== undefined) query.where({ vineyard_id: filter.vineyard_id });
    if (filter.vine_id !== undefined) query.where({ vine_id: filter.vine_id });
    return query;
  }

  async claimNext(worker: { id: string; owner_id: string }, at: string): Promise<JobClaim | null> {
    const claimed = await this.db.claimNextJob(worker.id, timeIn(at), JOB_CLAIM);
    if (!claimed) return null;
    const summary = toJobSummary(claimed.job);
    // The claim takes the owner from the worker's own row; a caller that named another owner
    // has a bug, and the throw rolls the claim back with the rest of the unit of work.
    if (summary.owner_id !== worker.owner_id) {
      throw new Error(`worker ${worker.id} does not belong to owner ${worker.owner_id}`);
    }
    if (claimed.snapshot === undefined) {
      throw new Error(`job ${summary.id} has no stored snapshot ${summary.config_hash}`);
    }
    return {
      job: { ...summary, config_snapshot: jsonOut<ConfigSnapshot>(claimed.snapshot) },
      vine: claimed.vine && {
        before: claimed.vine.before as VineStatus,
        after: claimed.vine.after as VineStatus,
      },
      cloud_identity: claimed.cloudIdentity && toCloudIdentity(claimed.cloudIdentity),
      vineyard: claimed.vineyard && toVineyard(claimed.vineyard),
    };
  }

  async standingOffers(ownerId: string, ids: readonly string[], at: string): Promise<Map<string, JobOffer>> {
    const standing = new Map<string, JobOffer>();
    if (ids.length === 0) return standing;
    const rows: Row[] = await this.db
      .table('jobs')
      .where({ owner_id: ownerId, status: 'QUEUED' })
      .whereIn('id', [...ids])
      .whereNull('assigned_worker_id')
      .whereNotNull('offered_worker_id')
      .select('id', 'offered_worker_id', 'offered_until');
    for (const row of rows) {
      const until = timeOut(row.offered_until);
      if (Date.parse(until) > Date.parse(at)) {
        standing.set(uuidOut(row.id), { worker_id: uuidOut(row.offered_worker_id), until });
      }
    }
    return standing;
  }

  async queue(owners: OwnerIds, limit: number): Promise<JobQueue> {
    const { sql, bindings } = queuePositionsSql(this.queued(owners));
    const rows = await this.db.raw(
      `SELECT ranked.*, count(*) OVER () AS queue_total FROM (${sql}) ranked
       ORDER BY ranked.queue_position, ranked.seq LIMIT ?`,
      [...bindings, limit],
    );
    return {
      jobs: rows.map((row) => ({ job: toJobSummary(row), position: Number(row.queue_position) })),
      total: rows.length === 0 ? 0 : Number(rows[0]?.queue_total),
    };
  }

  async queuePosition(ownerId: string, id: string): Promise<number | null> {
    const { sql, bindings } = queuePositionsSql(this.queued(ownerId));
    const [row] = await this.db.raw(`SELECT ranked.queue_position FROM (${sql}) ranked WHERE ranked.id = ?`, [
      ...bindings,
      id,
    ]);
    return row === undefined ? null : Number(row.queue_position);
  }

  /** The owners' queued jobs rows, whole: what the claim chooses among. */
  private queued(owners: OwnerIds) {
    return this.db
      .table('jobs')
      .whereIn('jobs.owner_id', ownerList(owners))
      .where('jobs.status', JOB_CLAIM.from)
      .select('jobs.*');
  }

  /** A conditional UPDATE: of two racing writers that expect the same status, one wins. */
  async update(ownerId: string, id: string, expected: JobStatus, patch: JobPatch): Promise<Job | null> {
    const changes = columnsOf(patch);
    const query = this.db.table('jobs').where({ owner_id: ownerId, id, status: expected });
    if (Object.keys(changes).length === 0) {
      const row = await query.first();
      return row ? this.one(row) : null;
    }
    const [row] = await query.update(changes).returning('*');
    return row ? this.one(row) : null;
  }

  /**
   * A worker was last heard of at its last heartbeat or when it claimed the job, whichever is
   * later (an agent that never sent a heartbeat was heard of when it claimed).
   */
  async listLost(cutoff: string): Promise<Job[]> {
    const before = timeIn(cutoff);
    const rows: Row[] = await this.db
      .table('jobs')
      .join('workers', 'workers.id', 'jobs.claimed_by_worker_id')
      .where('jobs.status', 'PROCESSING')
      .where((heard) => heard.whereNull('workers.last_heartbeat').orWhere('workers.last_heartbeat', '<', before))
      .where((claimed) => claimed.whereNull('jobs.claimed_at').orWhere('jobs.claimed_at', '<', before))
      .orderBy('jobs.seq')
      .select('jobs.*');
    return this.withSnapshots(rows);
  }

  async listCancelledForWorker(ownerId: string, workerId: string, since: string): Promise<string[]> {
    const rows: Row[] = await this.db
      .table('jobs')
      .where({ owner_id: ownerId, claimed_by_worker_id: workerId, status: 'CANCELLED' })
      .where('finished_at', '>=', timeIn(since))
      .orderBy([{ column: 'finished_at' }, { column: 'seq' }])
      .select('id');
    return rows.map((row) => uuidOut(row.id));
  }

  async busyWorkerIds(ownerId: string): Promise<string[]> {
    const rows: Row[] = await this.db
      .table('jobs')
      .where({ owner_id: ownerId, status: 'PROCESSING' })
      .whereNotNull('claimed_by_worker_id')
      .distinct('claimed_by_worker_id')
      .orderBy('claimed_by_worker_id');
    return rows.map((row) => uuidOut(row.claimed_by_worker_id));
  }

  /** A conditional UPDATE (`approval IS NULL`): of two racing deciders, one wins. */
  async setApproval(ownerId: string, id: string, approval: PlanApproval): Promise<Job | null> {
    const [row] = await this.db
      .table('jobs')
      .where({ owner_id: ownerId, id })
      .whereNull('approval')
      .update({ approval: jsonIn(approval) })
      .returning('*');
    return row ? this.one(row) : null;
  }

  /** Once per job, in the claim's unit of work. */
  async recordClaimedPolicies(ownerId: string, id: string, policies: ClaimedPolicy[]): Promise<void> {
    await this.db
      .table('jobs')
      .where({ owner_id: ownerId, id })
      .update({ claimed_policies: jsonIn(policies) });
  }

  async setPolicyOverride(ownerId: string, id: string, override: PolicyOverride): Promise<Job | null> {
    const [row] = await this.db
      .table('jobs')
      .where({ owner_id: ownerId, id })
      .whereNull('policy_override')
      .update({ policy_override: jsonIn(override) })
      .returning('*');
    return row ? this.one(row) : null;
  }

  async listDeploysOfPlan(ownerId: string, planJobId: string): Promise<Job[]> {
    const rows: Row[] = await this.db
      .table('jobs')
      .where({ owner_id: ownerId, plan_job_id: planJobId })
      .whereIn('job_type', ['DEPLOY', 'DESTROY'])
      .whereIn('status', PLAN_HOLDING_DEPLOY_STATUSES)
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'seq', order: 'desc' },
      ]);
    return this.withSnapshots(rows);
  }

  async latestChangeOfPlan(ownerId: string, planJobId: string): Promise<Job | null> {
    const row: Row | undefined = await this.db
      .table('jobs')
      .where({ owner_id: ownerId, plan_job_id: planJobId })
      .whereIn('job_type', ['DEPLOY', 'DESTROY'])
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'seq', order: 'desc' },
      ])
      .first();
    return row ? this.one(row) : null;
  }

  async lastChangePerVine(ownerId: string): Promise<JobSummary[]> {
    const ranked = this.db
      .table('jobs')
      .select('*')
      .rowNumber('change_rank', (window) => {
        window.orderBy('created_at', 'desc').orderBy('seq', 'desc').partitionBy(['vine_id']);
      })
      .where({ owner_id: ownerId, status: 'SUCCESS' })
      .whereNotNull('vine_id')
      .whereIn('job_type', ['PLAN', 'DEPLOY'])
      .where((query) => query.whereNull('trigger').orWhereJsonPath('trigger', '$.type', '!=', 'pull_request'))
      .as('ranked');
    // The ranking query is the owner's (scoped); the outer one only keeps each vine's first.
    const rows: Row[] = await this.db.unscoped('jobs').from(ranked).where('change_rank', 1);
    return rows.map(toJobSummary);
  }

  private async one(row: Row): Promise<Job> {
    const [job] = await this.withSnapshots([row]);
    return job as Job;
  }

  /** Jobs with their full snapshots, each distinct (owner, hash) read once in the unit of work. */
  private async withSnapshots(rows: Row[]): Promise<Job[]> {
    if (rows.length === 0) return [];
    const missing = new Map<string, [string, string]>();
    for (const row of rows) {
      const ownerId = uuidOut(row.owner_id);
      const hash = textOut(row.config_hash);
      const key = snapshotKey(ownerId, hash);
      if (!this.snapshots.has(key)) missing.set(key, [ownerId, hash]);
    }
    if (missing.size > 0) {
      const found: Row[] = await this.db
        .table('config_snapshots')
        .whereIn(['owner_id', 'config_hash'], [...missing.values()])
        .select('owner_id', 'config_hash', 'snapshot');
      for (const row of found) {
        this.snapshots.set(
          snapshotKey(uuidOut(row.owner_id), textOut(row.config_hash)),
          jsonOut<ConfigSnapshot>(row.snapshot),
        );
      }
    }
    return rows.map((row) => {
      const summary = toJobSummary(row);
      const snapshot = this.snapshots.get(snapshotKey(summary.owner_id, summary.config_hash));
      if (snapshot === undefined) throw new Error(`job ${summary.id} has no stored snapshot ${summary.config_hash}`);
      return { ...summary, config_snapshot: snapshot };
    });
  }
}

/** The alias of the full snapshot a read joins to its job's row (`get`). */
const JOINED_SNAPSHOT = 'joined_config_snapshot';

/** A snapshot's key: its owner and its content's hash. */
function snapshotKey(ownerId: string, hash: string): string {
  return `${ownerId}/${hash}`;
}

/** The columns a patch sets; fields the patch leaves undefined are not touched. */
function columnsOf(patch: JobPatch): Row {
  const columns: Row = {};
  if (patch.status !== undefined) columns.status = patch.status;
  if (patch.execution_metadata !== undefined) columns.execution_metadata = jsonIn(patch.execution_metadata);
  if (patch.error_message !== undefined) columns.error_message = patch.error_message;
  if (patch.finished_at !== undefined) columns.finished_at = timeInOrNull(patch.finished_at);
  if (patch.vine_status_before !== undefined) columns.vine_status_before = patch.vine_status_before;
  if (patch.claimed_by_worker_id !== undefined) columns.claimed_by_worker_id = patch.claimed_by_worker_id;
  if (patch.claimed_at !== undefined) columns.claimed_at = timeInOrNull(patch.claimed_at);
  return columns;
}

/** A jobs row as it is stored: its snapshot is the summary (the full one is in `config_snapshots`). */
function toJobSummary(row: Row): JobSummary {
  return {
    id: uuidOut(row.id),
    owner_id: uuidOut(row.owner_id),
    job_type: textOut(row.job_type) as JobType,
    status: textOut(row.status) as JobStatus,
    config_snapshot: jsonOut<SnapshotSummary>(row.config_snapshot),
    config_hash: textOut(row.config_hash),
    vine_id: uuidOutOrNull(row.vine_id),
    vineyard_id: uuidOutOrNull(row.vineyard_id),
    cloud_identity_id: uuidOutOrNull(row.cloud_identity_id),
    assigned_worker_id: uuidOutOrNull(row.assigned_worker_id),
    claimed_by_worker_id: uuidOutOrNull(row.claimed_by_worker_id),
    plan_job_id: uuidOutOrNull(row.plan_job_id),
    target_worker_id: uuidOutOrNull(row.target_worker_id),
    execution_metadata: jsonOut<JsonObject>(row.execution_metadata),
    error_message: textOutOrNull(row.error_message),
    vine_status_before: textOutOrNull(row.vine_status_before) as VineStatus | null,
    trigger: row.trigger === null || row.trigger === undefined ? { type: 'manual' } : jsonOut<JobTrigger>(row.trigger),
    created_by: row.created_by === null || row.created_by === undefined ? null : uuidOut(row.created_by),
    caused_by: row.caused_by === null || row.caused_by === undefined ? null : uuidOut(row.caused_by),
    claimed_policies:
      row.claimed_policies === null || row.claimed_policies === undefined
        ? null
        : jsonOut<ClaimedPolicy[]>(row.claimed_policies),
    approval: row.approval === null || row.approval === undefined ? null : jsonOut<PlanApproval>(row.approval),
    policy_override:
      row.policy_override === null || row.policy_override === undefined
        ? null
        : jsonOut<PolicyOverride>(row.policy_override),
    created_at: timeOut(row.created_at),
    claimed_at: timeOutOrNull(row.claimed_at),
    finished_at: timeOutOrNull(row.finished_at),
  };
}
