import { createHash } from 'node:crypto';
import type {
  ConfigSnapshot,
  Job,
  JobSummary,
  SnapshotSummary,
  SourceSummary,
  VineSourceSummary,
  Variables,
  Vine,
  UploadedSource,
  VineSource,
  Worker,
} from '../domain/records.js';
import { redactSource } from '../domain/gitSource.js';
import { canonicalJson } from './canonicalJson.js';

/** The vine as it is when a job is created (DESIGN §2). */
export function snapshotOfVine(vine: Vine): ConfigSnapshot {
  return {
    vine: { id: vine.id, name: vine.name, project_name: vine.project_name, vineyard_id: vine.vineyard_id },
    source: vine.source,
    variables: vine.variables,
    engine: vine.engine,
    cloud_identity_id: vine.cloud_identity_id,
  };
}

/**
 * The vine as it is now, at one exact commit of its git source (a git-driven job, issue 13): the
 * commit is part of the snapshot, so the config hash differs per commit. An inline source has no
 * commit to pin and is taken as it is.
 */
export function snapshotOfVineAt(vine: Vine, commit: string | null): ConfigSnapshot {
  const snapshot = snapshotOfVine(vine);
  if (commit === null || snapshot.source?.type !== 'git') return snapshot;
  return { ...snapshot, source: { ...snapshot.source, commit } };
}

/** The commit a job's snapshot pins, if any. */
export function pinnedCommitOf(snapshot: Pick<ConfigSnapshot, 'source'>): string | null {
  return snapshot.source?.type === 'git' ? (snapshot.source.commit ?? null) : null;
}

/** A DESTROY_WORKER job acts on a worker; its snapshot names the worker instead of a vine. */
export function snapshotOfWorkerTarget(worker: Pick<Worker, 'id' | 'name' | 'mode'>): ConfigSnapshot {
  return {
    vine: null,
    source: null,
    variables: {},
    engine: null,
    cloud_identity_id: null,
    target_worker: { id: worker.id, name: worker.name, mode: worker.mode },
  };
}

/** Lowercase hex SHA-256 of the RFC 8785 form of the snapshot. */
export function configHash(snapshot: ConfigSnapshot): string {
  return createHash('sha256').update(canonicalJson(snapshot), 'utf8').digest('hex');
}

/** The vine's variables with sensitive values replaced, for anything a person reads. */
export function redactVariables(variables: Variables): Variables {
  return Object.fromEntries(
    Object.entries(variables).map(([key, variable]) => [
      key,
      variable.sensitive ? { value: '***', sensitive: true } : variable,
    ]),
  );
}

/** A snapshot fit for people (CLI, web): sensitive variable values replaced. */
export function redactSnapshot(snapshot: ConfigSnapshot): ConfigSnapshot {
  return {
    ...snapshot,
    source: snapshot.source ? redactSource(snapshot.source) : snapshot.source,
    variables: redactVariables(snapshot.variables),
  };
}

/** What a list shows of a source: no inline files, and a git URL without credentials of old records. */
export function summarizeSource(source: VineSource): VineSourceSummary;
export function summarizeSource(source: VineSource | UploadedSource): SourceSummary;
export function summarizeSource(source: VineSource | UploadedSource): SourceSummary {
  return source.type === 'inline'
    ? { type: 'inline', file_count: Object.keys(source.files).length }
    : redactSource(source);
}

/** What a list shows of a snapshot: everything but the inline files and the variables. */
export function summarizeSnapshot(snapshot: ConfigSnapshot): SnapshotSummary {
  const { source, variables: _omitted, ...rest } = snapshot;
  return { ...rest, source: source === null ? null : summarizeSource(source) };
}

export function jobSummary(job: Job): JobSummary {
  return { ...job, config_snapshot: summarizeSnapshot(job.config_snapshot) };
}
