import { createHash, randomUUID } from 'node:crypto';
import type {
  ApiToken,
  CliLogin,
  CloudIdentity,
  Job,
  PlanArtifact,
  RefreshTokenRecord,
  User,
  Vine,
  Vineyard,
  Worker,
  WorkerRelease,
} from '@trellis/core';
import { DEFAULT_WORKSPACE_SETTINGS } from '@trellis/core';

/**
 * Records for the store conformance suite, valid as the use cases would build them. Times carry
 * milliseconds (a store that drops them fails the round trips) and, unless a test says otherwise,
 * increase with every record built, so "oldest first" and insertion order agree.
 */

const BASE_MS = Date.parse('2026-03-04T05:06:07.089Z');
let tick = 0;

/** The time `seconds` after the suite's base time (fractions keep their milliseconds). */
export function at(seconds: number): string {
  return new Date(BASE_MS + Math.round(seconds * 1000)).toISOString();
}

/** A time later than every one handed out before. */
export function later(): string {
  tick += 1;
  return new Date(BASE_MS + 86_400_000 + tick * 1_001).toISOString();
}

export const uuid = (): string => randomUUID();

let serial = 0;
function nextSerial(): number {
  serial += 1;
  return serial;
}

export function newUser(overrides: Partial<User> = {}): User {
  const n = nextSerial();
  return {
    id: uuid(),
    email: `user${n}-${uuid().slice(0, 8)}@example.test`,
    name: `User ${n}`,
    created_at: later(),
    ...overrides,
  };
}

export function newVineyard(ownerId: string, overrides: Partial<Vineyard> = {}): Vineyard {
  return { id: uuid(), owner_id: ownerId, name: `vineyard-${nextSerial()}`, created_at: later(), ...overrides };
}

export function newCloudIdentity(
  ownerId: string,
  overrides: Partial<Extract<CloudIdentity, { kind: 'assume_role' }>> = {},
): CloudIdentity {
  return {
    id: uuid(),
    owner_id: ownerId,
    kind: 'assume_role',
    provider: 'aws',
    role_arn: 'arn:aws:iam::123456789012:role/trellis-deployer',
    external_id: uuid(),
    ...overrides,
  };
}

export function newVine(ownerId: string, vineyardId: string, overrides: Partial<Vine> = {}): Vine {
  const n = nextSerial();
  const created = later();
  return {
    id: uuid(),
    owner_id: ownerId,
    vineyard_id: vineyardId,
    name: `vine-${n}`,
    project_name: `project-${n}`,
    cloud_identity_id: null,
    source: { type: 'git', url: 'https://git.example.test/infra.git', ref: 'main', path: null },
    variables: {
      region: { value: 'eu-west-1', sensitive: false },
      db_password: { value: 's3cr3t "quoted" ✓', sensitive: true },
    },
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
    created_at: created,
    updated_at: created,
    ...overrides,
  };
}

export function newWorker(ownerId: string, overrides: Partial<Worker> = {}): Worker {
  return {
    id: uuid(),
    owner_id: ownerId,
    name: `worker-${nextSerial()}`,
    mode: 'self-hosted',
    token_hash: 'a'.repeat(64),
    last_heartbeat: null,
    version: null,
    metadata: {},
    created_at: later(),
    destroyed_at: null,
    ...overrides,
  };
}

/** A QUEUED job of `vine` (a PLAN unless overridden), snapshot and hash as a use case makes them. */
export function newJob(ownerId: string, vine: Vine | null, overrides: Partial<Job> = {}): Job {
  return {
    id: uuid(),
    owner_id: ownerId,
    job_type: 'PLAN',
    status: 'QUEUED',
    config_snapshot: vine
      ? {
          vine: { id: vine.id, name: vine.name, project_name: vine.project_name, vineyard_id: vine.vineyard_id },
          source: vine.source,
          variables: vine.variables,
          engine: vine.engine,
          cloud_identity_id: vine.cloud_identity_id,
        }
      : { vine: null, source: null, variables: {}, engine: null, cloud_identity_id: null },
    config_hash: 'c0ffee'.padEnd(64, '0'),
    vine_id: vine?.id ?? null,
    vineyard_id: vine?.vineyard_id ?? null,
    cloud_identity_id: vine?.cloud_identity_id ?? null,
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
    created_at: later(),
    claimed_at: null,
    finished_at: null,
    ...overrides,
  };
}

/** A DESTROY_WORKER job: it acts on `target`, has no vine and names the worker in its snapshot. */
export function newDestroyWorkerJob(ownerId: string, target: Worker, overrides: Partial<Job> = {}): Job {
  return newJob(ownerId, null, {
    job_type: 'DESTROY_WORKER',
    target_worker_id: target.id,
    config_snapshot: {
      vine: null,
      source: null,
      variables: {},
      engine: null,
      cloud_identity_id: null,
      target_worker: { id: target.id, name: target.name, mode: target.mode },
    },
    ...overrides,
  });
}

export function newCliLogin(profileId: string | null, overrides: Partial<CliLogin> = {}): CliLogin {
  const created = later();
  return {
    device_code: uuid(),
    verification_code: 'BCDFGH',
    profile_id: profileId,
    provider: null,
    created_at: created,
    expires_at: new Date(Date.parse(created) + 600_000).toISOString(),
    attempts: 0,
    consumed_at: null,
    ...overrides,
  };
}

export function newRefreshToken(userId: string, overrides: Partial<RefreshTokenRecord> = {}): RefreshTokenRecord {
  return {
    id: uuid(),
    user_id: userId,
    family_id: uuid(),
    expires_at: new Date(Date.parse(later()) + 90 * 86_400_000).toISOString(),
    rotated_at: null,
    revoked_at: null,
    ...overrides,
  };
}

/** A personal token of `userId`, or with `org_id` an organization token (owned by the org). */
export function newApiToken(userId: string, overrides: Partial<ApiToken> = {}): ApiToken {
  const orgId = overrides.org_id ?? null;
  const id = uuid();
  return {
    id,
    owner_id: orgId ?? userId,
    created_by: userId,
    org_id: orgId,
    name: `token-${nextSerial()}`,
    role: orgId === null ? null : 'viewer',
    token_hash: createHash('sha256').update(id).digest('hex'),
    created_at: later(),
    expires_at: null,
    last_used_at: null,
    revoked_at: null,
    ...overrides,
  };
}

export function newRelease(version: string, overrides: Partial<WorkerRelease> = {}): WorkerRelease {
  return { version, release_notes: `Release ${version}\n\n- fixes ✓`, published_at: later(), ...overrides };
}

export function newPlanArtifact(ownerId: string, jobId: string, overrides: Partial<PlanArtifact> = {}): PlanArtifact {
  return {
    job_id: jobId,
    owner_id: ownerId,
    storage_key: `plans/${ownerId}/${jobId}/terraform.plan.out`,
    size: 50 * 1024 * 1024,
    sha256: 'b'.repeat(64),
    created_at: later(),
    ...overrides,
  };
}
