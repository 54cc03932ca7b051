/**
 * What the invariant checker reads after a fault scenario: the control plane's rows (from its
 * Postgres, as the superuser, past row security), the content of each state version (through the
 * API), the engine's ledgers and the agents' logs. And the configuration whose provisioners keep
 * the ledger.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { FsArtifactStore } from '@trellis/artifacts-fs';
import type { FaultRecords, LedgerEntry, PlanArtifactRecord, StateVersionRecord } from './invariants.js';
import { parseLedger } from './invariants.js';

/**
 * A configuration that keeps the engine's own ledger (`LedgerEntry`) in the file `var.ledger`:
 * `terraform_data.step` appends `begin <id>` when it is created, holds the apply for
 * `var.seconds` (printing `progress i/n` each second), appends `end <id>`; `destroyed <id>` when
 * destroyed. With `var.slow_state_url`, its plan first reads a remote state from that address
 * (an `http` backend the scenario answers slowly): a plan held open.
 */
export const LEDGER_CONFIGURATION = `
variable "ledger" {
  type = string
}

variable "seconds" {
  type    = number
  default = 0
}

variable "run" {
  type    = string
  default = "1"
}

variable "slow_state_url" {
  type    = string
  default = ""
}

data "terraform_remote_state" "slow" {
  count   = var.slow_state_url == "" ? 0 : 1
  backend = "http"
  config = {
    address = var.slow_state_url
  }
}

resource "terraform_data" "step" {
  input = { ledger = var.ledger, run = var.run }

  provisioner "local-exec" {
    command = "echo \\"begin \${self.id} $(date +%s%3N)\\" >> '\${var.ledger}'; for i in $(seq 1 \${var.seconds}); do echo \\"progress $i/\${var.seconds}\\"; sleep 1; done; echo \\"end \${self.id} $(date +%s%3N)\\" >> '\${var.ledger}'"
  }

  provisioner "local-exec" {
    when    = destroy
    command = "echo \\"destroyed \${self.id} $(date +%s%3N)\\" >> '\${self.input.ledger}'"
  }
}
`;

/** The part of `pg.Client` the loader uses. */
export interface Queryable {
  query<R>(sql: string, values?: unknown[]): Promise<{ rows: R[] }>;
}

/** A connection to `url` (pg is an optional peer dependency of testkit: loaded only here). */
export async function connectPostgres(url: string): Promise<Queryable & { end(): Promise<void> }> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return {
    query: async <R>(sql: string, values?: unknown[]) => ({ rows: (await client.query(sql, values)).rows as R[] }),
    end: () => client.end(),
  };
}

export interface RecordSources {
  /** A connection to the control plane's database as a superuser (row security does not apply). */
  db: Queryable;
  /** The content of a state version (the API's download). */
  stateText(vineId: string, versionId: number): Promise<string>;
  /** The filesystem artifact store's directory, where the plan files are read back (none: not checked). */
  artifactsDir?: string;
  /** The ledger file of each vine the scenario ran the ledger configuration on. */
  ledgerFiles: Record<string, string>;
  agentLogs: string[];
  /** Each control plane replica's own JSON log lines (none: not checked). */
  serverLogs?: string[];
}

/** Gathers everything `checkInvariants` reads. */
export async function loadFaultRecords(sources: RecordSources): Promise<FaultRecords> {
  const { db } = sources;
  const iso = (value: unknown) => (value === null ? null : new Date(value as string).toISOString());
  const jobs = (
    await db.query<Record<string, unknown>>(
      'SELECT id, vine_id, job_type, status, error_message, claimed_at, finished_at FROM jobs ORDER BY seq',
    )
  ).rows.map((row) => ({
    id: row.id as string,
    vine_id: (row.vine_id as string | null) ?? null,
    job_type: row.job_type as string,
    status: row.status as string,
    error_message: (row.error_message as string | null) ?? null,
    claimed_at: iso(row.claimed_at),
    finished_at: iso(row.finished_at),
  }));
  const vines = (await db.query<{ id: string }>('SELECT id FROM vines')).rows;
  const audits = (
    await db.query<{ action: string; target_type: string; target_id: string }>(
      'SELECT action, target_type, target_id FROM audit_entries ORDER BY seq',
    )
  ).rows;
  // A delivery names its job in its payload (`{ event, job: { id, … }, … }`).
  const outbox = (
    await db.query<{ event: string | null; payload: string }>(
      "SELECT event, payload FROM outbox WHERE kind = 'notification' ORDER BY seq",
    )
  ).rows.map((row) => {
    const payload = (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload) as {
      job?: { id?: string } | null;
    };
    return { event: row.event, job_id: payload.job?.id ?? null };
  });
  const logChunks = (
    await db.query<{ job_id: string; id: string; seq: string | null }>('SELECT job_id, id, seq FROM log_chunks')
  ).rows.map((row) => ({ job_id: row.job_id, id: Number(row.id), seq: row.seq === null ? null : Number(row.seq) }));
  const versionRows = (
    await db.query<Record<string, unknown>>(
      'SELECT vine_id, id, job_id, serial, lineage, rejected, after_lost, reviewed_at FROM state_versions ORDER BY id',
    )
  ).rows;
  const stateVersions: StateVersionRecord[] = [];
  for (const row of versionRows) {
    const vineId = row.vine_id as string;
    const id = Number(row.id);
    stateVersions.push({
      vine_id: vineId,
      id,
      job_id: (row.job_id as string | null) ?? null,
      serial: Number(row.serial),
      lineage: row.lineage as string,
      rejected: row.rejected === true,
      after_lost: row.after_lost === true,
      reviewed: row.reviewed_at !== null,
      resource_ids: resourceIds(await sources.stateText(vineId, id)),
    });
  }
  const ledgers: Record<string, LedgerEntry[]> = {};
  for (const [vineId, file] of Object.entries(sources.ledgerFiles)) ledgers[vineId] = readLedger(file);
  const planArtifacts = sources.artifactsDir === undefined ? [] : await readPlanArtifacts(db, sources.artifactsDir);
  return {
    vines,
    jobs,
    audits,
    outbox,
    logChunks,
    stateVersions,
    planArtifacts,
    ledgers,
    agentLogs: sources.agentLogs,
    serverLogs: sources.serverLogs ?? [],
  };
}

/** Each recorded plan file beside the bytes its filesystem store holds under its key. */
async function readPlanArtifacts(db: Queryable, artifactsDir: string): Promise<PlanArtifactRecord[]> {
  const store = new FsArtifactStore(artifactsDir);
  const rows = (
    await db.query<{ job_id: string; storage_key: string; size: string; sha256: string }>(
      'SELECT job_id, storage_key, size, sha256 FROM plan_artifacts ORDER BY created_at',
    )
  ).rows;
  const records: PlanArtifactRecord[] = [];
  for (const row of rows) {
    let stored: PlanArtifactRecord['stored'] = null;
    try {
      const object = await store.get(row.storage_key);
      const hash = createHash('sha256');
      let size = 0;
      for await (const part of object.body) {
        hash.update(part as Uint8Array);
        size += (part as Uint8Array).length;
      }
      stored = { size, sha256: hash.digest('hex') };
    } catch {
      // Nothing readable under the key: the checker says so.
    }
    records.push({ job_id: row.job_id, size: Number(row.size), sha256: row.sha256, stored });
  }
  return records;
}

function readLedger(file: string): LedgerEntry[] {
  try {
    return parseLedger(readFileSync(file, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []; // the engine created nothing
    throw error;
  }
}

/** The ids of the `terraform_data` instances of a state file (v4), tainted ones included. */
export function resourceIds(stateText: string): string[] {
  const state = JSON.parse(stateText) as {
    resources?: { mode?: string; type?: string; instances?: { attributes?: { id?: unknown } }[] }[];
  };
  return (state.resources ?? [])
    .filter((resource) => resource.mode === 'managed' && resource.type === 'terraform_data')
    .flatMap((resource) => resource.instances ?? [])
    .map((instance) => instance.attributes?.id)
    .filter((id): id is string => typeof id === 'string');
}
