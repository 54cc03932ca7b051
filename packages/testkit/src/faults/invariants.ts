/**
 * The invariant checker of the fault scenarios (issue 30), in the manner of Jepsen's checkers: a
 * scenario breaks things, then hands what the system recorded (the database's rows, the state
 * history, the agents' logs) and what the engine itself recorded (a ledger its `local-exec`
 * provisioners append to) to `checkInvariants`, which names every promise that was broken. Pure:
 * `loadFaultRecords` (records.ts) gathers the records; the unit tests feed crafted bad ones.
 */
import { JOB_END_REASONS } from '@trellis/core';

export interface JobRecord {
  id: string;
  vine_id: string | null;
  job_type: string;
  status: string;
  error_message: string | null;
  /** ISO 8601 or null. */
  claimed_at: string | null;
  finished_at: string | null;
}

export interface AuditRecord {
  action: string;
  target_type: string;
  target_id: string;
}

/** A `notification` row of the outbox: a job's end announced (`job.succeeded`, …) or another event. */
export interface OutboxRecord {
  event: string | null;
  job_id: string | null;
}

export interface LogChunkRecord {
  job_id: string;
  /** Storage order. */
  id: number;
  /** The agent's sequence number; null for the control plane's own lines. */
  seq: number | null;
}

export interface StateVersionRecord {
  vine_id: string;
  /** Write order. */
  id: number;
  job_id: string | null;
  serial: number;
  lineage: string;
  rejected: boolean;
  after_lost: boolean;
  reviewed: boolean;
  /** The ids of the `terraform_data` instances in this version. */
  resource_ids: string[];
}

/**
 * What the engine did, by its own account: one line per event, appended by the scenario
 * configuration's provisioners (`ledgerConfiguration`): `begin <id> <ms>` when a resource was
 * created (before its provisioner's work), `end <id> <ms>` when that work finished, `destroyed
 * <id> <ms>` when it was destroyed.
 */
export interface LedgerEntry {
  event: 'begin' | 'end' | 'destroyed';
  resource_id: string;
  at_ms: number;
}

/**
 * A plan file as the control plane recorded it (`plan_artifacts`) beside what its artifact store
 * holds under its key (null: nothing readable there).
 */
export interface PlanArtifactRecord {
  job_id: string;
  size: number;
  sha256: string;
  stored: { size: number; sha256: string } | null;
}

export interface FaultRecords {
  vines: { id: string }[];
  jobs: JobRecord[];
  audits: AuditRecord[];
  outbox: OutboxRecord[];
  logChunks: LogChunkRecord[];
  stateVersions: StateVersionRecord[];
  /** Every recorded plan file and what the store holds for it (empty when the scenario did not read the store). */
  planArtifacts: PlanArtifactRecord[];
  /** The engine's ledger, by vine id (a vine without one is not checked for resources). */
  ledgers: Record<string, LedgerEntry[]>;
  /** Each agent process's own JSON log lines (stderr). */
  agentLogs: string[];
  /** Each control plane replica's JSON log lines: a `500` it answered names its cause there. */
  serverLogs: string[];
}

export interface CheckOptions {
  /** The scenario subscribed a notification to every job event, so each end is in the outbox once. */
  announcedEnds?: boolean;
}

export type InvariantName =
  | 'job_ended'
  | 'job_ended_once'
  | 'job_ran_once'
  | 'applies_do_not_overlap'
  | 'created_resources_in_state'
  | 'state_history_continues'
  | 'log_chunks_once_in_order'
  | 'plan_artifacts_whole'
  | 'audited'
  | 'no_internal_errors';

export interface Violation {
  invariant: InvariantName;
  detail: string;
}

const TERMINAL = new Set(['SUCCESS', 'FAILED', 'CANCELLED']);
const APPLIES = new Set(['DEPLOY', 'DESTROY']);
const END_EVENTS: Record<string, string> = {
  SUCCESS: 'job.succeeded',
  FAILED: 'job.failed',
  CANCELLED: 'job.cancelled',
};

/** The messages of the ends the control plane makes itself (every one audited), by the event's message table. */
const AUDITED_END_MESSAGES: ReadonlySet<string> = new Set<string>(
  Object.values(JOB_END_REASONS)
    .filter((rule) => rule.audited)
    .flatMap((rule) => Object.values(rule.messages)),
);

/** Every broken promise found in `records`; empty when the scenario lost and doubled nothing. */
export function checkInvariants(records: FaultRecords, options: CheckOptions = {}): Violation[] {
  return [
    ...jobsEnded(records, options),
    ...jobsRanOnce(records),
    ...appliesDoNotOverlap(records),
    ...createdResourcesInState(records),
    ...stateHistoryContinues(records),
    ...logChunksOnceInOrder(records),
    ...planArtifactsWhole(records),
    ...audited(records),
    ...noInternalErrors(records),
  ];
}

/**
 * No plan file is visible half-written: every plan the control plane recorded is in its store
 * whole, the bytes of the size and sha256 it recorded (a DEPLOY verifies the same on download).
 */
function planArtifactsWhole(records: FaultRecords): Violation[] {
  const found: Violation[] = [];
  for (const plan of records.planArtifacts) {
    if (plan.stored === null) {
      found.push({
        invariant: 'plan_artifacts_whole',
        detail: `the plan of job ${plan.job_id} is recorded but not stored`,
      });
    } else if (plan.stored.size !== plan.size || plan.stored.sha256 !== plan.sha256) {
      found.push({
        invariant: 'plan_artifacts_whole',
        detail: `the plan of job ${plan.job_id} is stored as ${plan.stored.size} bytes (sha256 ${plan.stored.sha256}), recorded as ${plan.size} (${plan.sha256})`,
      });
    }
  }
  return found;
}

/**
 * Whatever broke, the control plane refused cleanly (a 503 to retry, a 409): no agent saw a
 * `500 internal_error`, and no replica logged an unhandled error (the line names its cause).
 */
function noInternalErrors(records: FaultRecords): Violation[] {
  const found: Violation[] = [];
  for (const log of records.agentLogs) {
    for (const line of log.split('\n')) {
      if (line.includes('internal_error')) found.push({ invariant: 'no_internal_errors', detail: line.slice(0, 400) });
    }
  }
  for (const log of records.serverLogs) {
    for (const line of log.split('\n')) {
      const entry = parseJson(line);
      if (entry?.msg === 'unhandled error') {
        found.push({ invariant: 'no_internal_errors', detail: `a replica logged: ${line.slice(0, 1500)}` });
      }
    }
  }
  return found;
}

/** Every job ended, and exactly once: one end announced, at most one end audited. */
function jobsEnded(records: FaultRecords, options: CheckOptions): Violation[] {
  const found: Violation[] = [];
  const announced = countBy(
    records.outbox.filter((row) => row.job_id !== null && row.event?.startsWith('job.')),
    (row) => row.job_id as string,
  );
  for (const job of records.jobs) {
    if (!TERMINAL.has(job.status)) {
      found.push({ invariant: 'job_ended', detail: `job ${job.id} (${job.job_type}) is still ${job.status}` });
      continue;
    }
    if (job.finished_at === null) {
      found.push({ invariant: 'job_ended', detail: `job ${job.id} is ${job.status} without finished_at` });
    }
    if (options.announcedEnds) {
      const events = records.outbox.filter((row) => row.job_id === job.id && row.event?.startsWith('job.'));
      if ((announced.get(job.id) ?? 0) !== 1 || events[0]?.event !== END_EVENTS[job.status]) {
        found.push({
          invariant: 'job_ended_once',
          detail: `job ${job.id} is ${job.status} but its end was announced as [${events.map((row) => row.event).join(', ')}]`,
        });
      }
    }
  }
  return found;
}

/** No job was started by two agent processes (or twice by one). */
function jobsRanOnce(records: FaultRecords): Violation[] {
  const starts = new Map<string, number>();
  for (const log of records.agentLogs) {
    for (const line of log.split('\n')) {
      const entry = parseJson(line);
      if (entry?.msg === 'job started' && typeof entry.job_id === 'string') {
        starts.set(entry.job_id, (starts.get(entry.job_id) ?? 0) + 1);
      }
    }
  }
  return [...starts]
    .filter(([, count]) => count > 1)
    .map(([id, count]) => ({ invariant: 'job_ran_once' as const, detail: `job ${id} was started ${count} times` }));
}

interface Interval {
  job: string;
  from: number;
  to: number;
}

/**
 * No two applies (DEPLOY, DESTROY) of one vine overlap: each runs from its claim to the later of
 * its end on the control plane and the end of its engine's work (by the ledger: a job failed as
 * lost may have an engine that goes on applying). A ledger interval belongs to the apply claimed
 * last before it began.
 */
function appliesDoNotOverlap(records: FaultRecords): Violation[] {
  const found: Violation[] = [];
  const byVine = groupBy(
    records.jobs.filter((job) => APPLIES.has(job.job_type) && job.vine_id !== null && job.claimed_at !== null),
    (job) => job.vine_id as string,
  );
  for (const [vineId, jobs] of byVine) {
    const intervals: Interval[] = jobs
      .map((job) => ({
        job: job.id,
        from: Date.parse(job.claimed_at as string),
        to: job.finished_at === null ? Number.POSITIVE_INFINITY : Date.parse(job.finished_at),
      }))
      .sort((a, b) => a.from - b.from);
    const ledger = records.ledgers[vineId] ?? [];
    for (const begin of ledger.filter((entry) => entry.event === 'begin')) {
      const end = ledger.find((entry) => entry.event === 'end' && entry.resource_id === begin.resource_id);
      const owner = intervals.filter((interval) => interval.from <= begin.at_ms).at(-1);
      if (!owner) {
        found.push({
          invariant: 'applies_do_not_overlap',
          detail: `vine ${vineId}: the engine began resource ${begin.resource_id} before any apply was claimed`,
        });
        continue;
      }
      owner.to = Math.max(owner.to, end?.at_ms ?? begin.at_ms);
    }
    for (let i = 1; i < intervals.length; i++) {
      const earlier = intervals[i - 1] as Interval;
      const later = intervals[i] as Interval;
      if (later.from < earlier.to) {
        found.push({
          invariant: 'applies_do_not_overlap',
          detail: `vine ${vineId}: apply ${later.job} began while apply ${earlier.job} was still applying`,
        });
      }
    }
  }
  return found;
}

/** The current state of a vine: its newest version that was not rejected. */
export function currentState(records: Pick<FaultRecords, 'stateVersions'>, vineId: string): StateVersionRecord | null {
  return (
    records.stateVersions
      .filter((version) => version.vine_id === vineId && !version.rejected)
      .sort((a, b) => a.id - b.id)
      .at(-1) ?? null
  );
}

/** Every resource the engine created and did not destroy is in the vine's current state, and nothing else. */
function createdResourcesInState(records: FaultRecords): Violation[] {
  const found: Violation[] = [];
  for (const [vineId, ledger] of Object.entries(records.ledgers)) {
    const destroyed = new Set(ledger.filter((e) => e.event === 'destroyed').map((e) => e.resource_id));
    const live = new Set(
      ledger.filter((e) => e.event === 'begin' && !destroyed.has(e.resource_id)).map((e) => e.resource_id),
    );
    const inState = new Set(currentState(records, vineId)?.resource_ids ?? []);
    for (const id of live) {
      if (!inState.has(id)) {
        found.push({
          invariant: 'created_resources_in_state',
          detail: `vine ${vineId}: resource ${id}, created by the engine, is not in the current state (orphaned)`,
        });
      }
    }
    for (const id of inState) {
      if (!live.has(id)) {
        found.push({
          invariant: 'created_resources_in_state',
          detail: `vine ${vineId}: the current state holds resource ${id}, which the engine ${destroyed.has(id) ? 'destroyed' : 'never created'}`,
        });
      }
    }
  }
  return found;
}

/** The accepted versions of a vine continue one another: one lineage, serials that never go back. */
function stateHistoryContinues(records: FaultRecords): Violation[] {
  const found: Violation[] = [];
  const byVine = groupBy(
    records.stateVersions.filter((version) => !version.rejected),
    (version) => version.vine_id,
  );
  for (const [vineId, versions] of byVine) {
    versions.sort((a, b) => a.id - b.id);
    for (let i = 1; i < versions.length; i++) {
      const before = versions[i - 1] as StateVersionRecord;
      const after = versions[i] as StateVersionRecord;
      if (after.lineage !== before.lineage || after.serial < before.serial) {
        found.push({
          invariant: 'state_history_continues',
          detail: `vine ${vineId}: version ${after.id} (${after.lineage} serial ${after.serial}) does not continue version ${before.id} (${before.lineage} serial ${before.serial})`,
        });
      }
    }
  }
  return found;
}

/** Each job's agent chunks are stored once and in order: in storage order, seq 1, 2, 3, … */
function logChunksOnceInOrder(records: FaultRecords): Violation[] {
  const found: Violation[] = [];
  const byJob = groupBy(
    records.logChunks.filter((chunk) => chunk.seq !== null),
    (chunk) => chunk.job_id,
  );
  for (const [jobId, chunks] of byJob) {
    chunks.sort((a, b) => a.id - b.id);
    const seqs = chunks.map((chunk) => chunk.seq as number);
    const broken = seqs.findIndex((seq, index) => seq !== index + 1);
    if (broken !== -1) {
      found.push({
        invariant: 'log_chunks_once_in_order',
        detail: `job ${jobId}: chunk ${broken + 1} in storage order has seq ${seqs[broken]} (seqs ${summarize(seqs)})`,
      });
    }
  }
  return found;
}

/**
 * The audit log has an entry for every change: each vine's creation, each job's creation, each
 * end the control plane made itself (at most one end per job), each acknowledged late state.
 */
function audited(records: FaultRecords): Violation[] {
  const found: Violation[] = [];
  const count = (action: string, target: string) =>
    records.audits.filter((entry) => entry.action === action && entry.target_id === target).length;
  for (const vine of records.vines) {
    if (count('vine.create', vine.id) !== 1) {
      found.push({
        invariant: 'audited',
        detail: `vine ${vine.id} has ${count('vine.create', vine.id)} vine.create entries`,
      });
    }
  }
  for (const job of records.jobs) {
    if (count('job.create', job.id) !== 1) {
      found.push({
        invariant: 'audited',
        detail: `job ${job.id} has ${count('job.create', job.id)} job.create entries`,
      });
    }
    const ends = count('job.fail', job.id) + count('job.cancel', job.id);
    const endedByControlPlane = job.status !== 'SUCCESS' && AUDITED_END_MESSAGES.has(job.error_message ?? '');
    if (ends > 1 || (endedByControlPlane && ends !== 1)) {
      found.push({
        invariant: 'audited',
        detail: `job ${job.id} (${job.status}: ${job.error_message}) has ${ends} end entries`,
      });
    }
  }
  for (const version of records.stateVersions.filter((v) => v.after_lost && v.reviewed)) {
    if (count('state.after_lost_acknowledge', version.vine_id) === 0) {
      found.push({
        invariant: 'audited',
        detail: `vine ${version.vine_id}: late version ${version.id} was acknowledged without an audit entry`,
      });
    }
  }
  return found;
}

/** Parses a ledger file's text (`begin|end|destroyed <id> <ms>` per line). */
export function parseLedger(text: string): LedgerEntry[] {
  const entries: LedgerEntry[] = [];
  for (const line of text.split('\n')) {
    const match = /^(begin|end|destroyed) (\S+) (\d+)$/.exec(line.trim());
    if (match) {
      entries.push({
        event: match[1] as LedgerEntry['event'],
        resource_id: match[2] as string,
        at_ms: Number(match[3]),
      });
    }
  }
  return entries;
}

/** A readable report of violations, for a test's failure message. */
export function describeViolations(violations: Violation[]): string {
  return violations.map((violation) => `${violation.invariant}: ${violation.detail}`).join('\n');
}

function countBy<T>(items: T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const group = groups.get(key(item));
    if (group) group.push(item);
    else groups.set(key(item), [item]);
  }
  return groups;
}

function parseJson(line: string): Record<string, unknown> | null {
  if (!line.startsWith('{')) return null;
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return null;
  }
}

function summarize(seqs: number[]): string {
  return seqs.length <= 12 ? seqs.join(',') : `${seqs.slice(0, 12).join(',')},… (${seqs.length})`;
}
