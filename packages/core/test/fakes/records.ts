import { DEFAULT_WORKSPACE_SETTINGS, type Job, type Vine, type Worker } from '@trellis/core';
import { uuidFromBytes } from '@trellis/testkit/memory';

/** Plain records for tests that talk to stores directly. */

let counter = 0;
export function id(): string {
  counter += 1;
  const bytes = Buffer.alloc(16);
  bytes.writeUInt32BE(counter, 12);
  return uuidFromBytes(bytes);
}

export const OWNER_A = '0a0a0a0a-0000-4000-8000-00000000000a';
export const OWNER_B = '0b0b0b0b-0000-4000-8000-00000000000b';

export function at(second: number): string {
  return new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();
}

export function jobRecord(overrides: Partial<Job> = {}): Job {
  return {
    id: id(),
    owner_id: OWNER_A,
    job_type: 'PLAN',
    status: 'QUEUED',
    config_snapshot: { vine: null, source: null, variables: {}, engine: null, cloud_identity_id: null },
    config_hash: 'h',
    vine_id: null,
    vineyard_id: null,
    cloud_identity_id: null,
    assigned_worker_id: null,
    claimed_by_worker_id: null,
    plan_job_id: null,
    target_worker_id: null,
    execution_metadata: {},
    error_message: null,
    vine_status_before: null,
    trigger: { type: 'manual' },
    created_by: null,
    caused_by: null,
    claimed_policies: null,
    approval: null,
    policy_override: null,
    created_at: at(0),
    claimed_at: null,
    finished_at: null,
    ...overrides,
  };
}

export function vineRecord(overrides: Partial<Vine> = {}): Vine {
  const vineId = overrides.id ?? id();
  return {
    id: vineId,
    owner_id: OWNER_A,
    vineyard_id: id(),
    name: `vine-${vineId.slice(-4)}`,
    project_name: `project-${vineId.slice(-4)}`,
    cloud_identity_id: null,
    source: { type: 'inline', files: { 'main.tf': '' } },
    variables: {},
    engine: { name: 'tofu', version: null },
    status: 'NEW',
    status_message: null,
    drift_detection: null,
    next_drift_check_at: null,
    drift: null,
    triggers: { after: [] },
    approval: null,
    tags: [],
    terraform_version: 'latest',
    execution_mode: 'remote',
    workspace_settings: { ...DEFAULT_WORKSPACE_SETTINGS },
    created_at: at(0),
    updated_at: at(0),
    ...overrides,
  };
}

export function workerRecord(overrides: Partial<Worker> = {}): Worker {
  return {
    id: id(),
    owner_id: OWNER_A,
    name: 'worker',
    mode: 'self-hosted',
    token_hash: 'a'.repeat(64),
    last_heartbeat: null,
    version: null,
    metadata: {},
    created_at: at(0),
    destroyed_at: null,
    ...overrides,
  };
}
