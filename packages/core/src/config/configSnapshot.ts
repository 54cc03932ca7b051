import { createHash } from 'node:crypto';
import type { ConfigSnapshot, Variables, Vine, Worker } from '../domain/records.js';
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
  return { ...snapshot, variables: redactVariables(snapshot.variables) };
}
