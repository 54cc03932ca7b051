import { randomUUID } from 'node:crypto';
import { ownerScope, type Scope, systemScope, type UnitOfWork } from '@trellis/core';

export interface Seeded {
  id: string;
  vineyardId: string;
  vineId: string;
  jobId: string;
}

/** One owner with a row in every owned table (and one release, which nobody owns). */
export async function seedEverything(uow: UnitOfWork): Promise<Seeded> {
  const id = randomUUID();
  const now = new Date().toISOString();
  await uow.run(systemScope, async (stores) => {
    await stores.users.create({ id, email: `${id}@example.test`, name: 'owner', created_at: now });
    await stores.identities.upsert({
      user_id: id,
      provider: 'github',
      provider_user_id: id,
      provider_token: 't',
      scopes: '',
    });
    await stores.refreshTokens.create({
      id: randomUUID(),
      user_id: id,
      family_id: randomUUID(),
      expires_at: now,
      rotated_at: null,
      revoked_at: null,
    });
    if (!(await stores.releases.get('1.0.0'))) {
      await stores.releases.create({ version: '1.0.0', release_notes: '', published_at: now });
    }
  });
  await uow.run(ownerScope(id), (stores) =>
    stores.cliLogins.create({
      device_code: randomUUID(),
      verification_code: 'BCDFGH',
      profile_id: id,
      provider: null,
      created_at: now,
      expires_at: now,
      attempts: 0,
      consumed_at: null,
    }),
  );
  return { id, ...(await seedOwnedRecords(uow, ownerScope(id), id)) };
}

/**
 * A row in every table whose rows belong to an owner by `owner_id` (a user or an organization),
 * written in `scope`.
 */
export async function seedOwnedRecords(
  uow: UnitOfWork,
  scope: Scope,
  id: string,
): Promise<{ vineyardId: string; vineId: string; jobId: string }> {
  const now = new Date().toISOString();
  return uow.run(scope, async (stores) => {
    const vineyard = await stores.vineyards.create({ id: randomUUID(), owner_id: id, name: 'v', created_at: now });
    const identity = await stores.cloudIdentities.create({
      id: randomUUID(),
      owner_id: id,
      kind: 'assume_role',
      provider: 'aws',
      role_arn: 'arn:aws:iam::123456789012:role/x',
      external_id: randomUUID(),
    });
    const vine = await stores.vines.create({
      id: randomUUID(),
      owner_id: id,
      vineyard_id: vineyard.id,
      name: 'vine',
      project_name: 'vine',
      cloud_identity_id: identity.id,
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
      created_at: now,
      updated_at: now,
    });
    const worker = await stores.workers.create({
      id: randomUUID(),
      owner_id: id,
      name: 'w',
      mode: 'self-hosted',
      token_hash: 'x',
      last_heartbeat: null,
      version: null,
      metadata: {},
      created_at: now,
      destroyed_at: null,
    });
    const job = await stores.jobs.create({
      id: randomUUID(),
      owner_id: id,
      job_type: 'PLAN',
      status: 'PROCESSING',
      config_snapshot: { vine: null, source: null, variables: {}, engine: null, cloud_identity_id: null },
      config_hash: 'x',
      vine_id: vine.id,
      vineyard_id: vineyard.id,
      cloud_identity_id: identity.id,
      assigned_worker_id: null,
      claimed_by_worker_id: worker.id,
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
      created_at: now,
      claimed_at: now,
      finished_at: null,
    });
    await stores.logs.append(id, job.id, 'hello', 'STDOUT', now);
    await stores.planArtifacts.save({
      job_id: job.id,
      owner_id: id,
      storage_key: 'k',
      size: 1,
      sha256: 'x',
      created_at: now,
    });
    await stores.vines.saveComponents(
      id,
      vine.id,
      { cluster: null, argocd: { url: 'https://argo.example.test', job_id: job.id }, outputs: null },
      now,
    );
    await stores.states.addVersion({
      owner_id: id,
      vine_id: vine.id,
      serial: 1,
      lineage: randomUUID(),
      size: 1,
      sha256: 'x',
      storage_key: 'k',
      job_id: job.id,
      created_at: now,
    });
    await stores.states.acquireLock({
      owner_id: id,
      vine_id: vine.id,
      lock_id: 'l',
      info: { ID: 'l' },
      created_at: now,
    });
    return { vineyardId: vineyard.id, vineId: vine.id, jobId: job.id };
  });
}
