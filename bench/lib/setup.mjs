/**
 * Setup that is not measured: users, agents, vines and jobs made through the control plane's own
 * use cases, in the bench process, on the database the measured server will then use. Going
 * through the use cases (not hand-written rows) keeps the data exactly what the API would make,
 * and is much faster than thousands of setup requests.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TrellisClient } from '@trellis/client';
import { configHash, ownerScope, parseVineInput, snapshotOfVine } from '@trellis/core';
import { createControlPlane } from '@trellis/server';
import { openSqlStore } from '@trellis/store-sql';
import { deferCleanup } from './cleanup.mjs';
import { controlPlaneEnv } from './environment.mjs';

/** Migrates `databaseUrl` and hands `work` the use cases of a control plane on it (not listening). */
export async function withUseCases(databaseUrl, work) {
  const dataDir = await mkdtemp(join(tmpdir(), 'trellis-bench-setup-'));
  const removeDataDir = deferCleanup(() => rm(dataDir, { recursive: true, force: true }));
  try {
    const controlPlane = await createControlPlane({ env: controlPlaneEnv({ databaseUrl, dataDir }) });
    try {
      return await work(controlPlane.useCases);
    } finally {
      await controlPlane.close();
    }
  } finally {
    await removeDataDir();
  }
}

/** A user with a CLI access token (device login, as `trellis login` gets one). */
export async function createOwner(useCases, email = 'bench@example.com') {
  const user = await useCases.auth.ensureUser({ email });
  const actor = { userId: user.id, email: user.email };
  const deviceCode = randomUUID();
  const { verification_code } = await useCases.auth.generateCliLogin(actor, deviceCode);
  const tokens = await useCases.auth.exchangeCliLogin({ device_code: deviceCode, verification_code });
  return { actor, accessToken: tokens.access_token };
}

/** `count` registered agents of the owner, each its own worker with its own token. */
export async function registerAgents(useCases, owner, count, prefix = 'bench-agent') {
  const agents = [];
  for (let i = 0; i < count; i += 1) {
    const { worker_id, worker_token } = await useCases.workers.register(owner.actor, { name: `${prefix}-${i}` });
    agents.push({ workerId: worker_id, workerToken: worker_token, ownerId: owner.actor.userId });
  }
  return agents;
}

const MAIN_TF = 'variable "n" {\n  default = 1\n}\noutput "n" {\n  value = var.n\n}\n';

/**
 * `count` queued PLAN jobs, each on a vine of its own (one job at a time per vine: with one job
 * per vine every queued job is claimable at once, so claims never wait on a vine's running job).
 * `parallel` requests run at a time, which Postgres turns into speed; SQLite serialises them.
 */
export async function queuePlanJobs(useCases, owner, count, { parallel = 8, prefix = 'bench' } = {}) {
  const vineyard = await useCases.vineyards.create(owner.actor, { name: `${prefix}-yard-${randomUUID().slice(0, 8)}` });
  const jobs = new Array(count);
  let next = 0;
  async function lane() {
    for (let i = next++; i < count; i = next++) {
      const vine = await useCases.vines.create(owner.actor, {
        name: `${prefix}-vine-${i}`,
        vineyard_id: vineyard.id,
        source: { type: 'inline', files: { 'main.tf': MAIN_TF } },
        variables: { n: String(i) },
      });
      jobs[i] = await useCases.jobs.create(owner.actor, { job_type: 'PLAN', configuration_id: vine.id });
    }
  }
  await Promise.all(Array.from({ length: Math.min(parallel, count) }, lane));
  return jobs;
}

/**
 * The same as `queuePlanJobs` for thousands of jobs: the rows the two use cases would write (input
 * parsed, snapshot and hash by core's own functions), stored through the store port in a few
 * large transactions instead of two per job, which would take half a minute on Postgres here.
 */
export async function queueManyPlanJobs(databaseUrl, owner, vineyardId, count, { batch = 500, prefix = 'bulk' } = {}) {
  const ownerId = owner.actor.userId;
  const store = await openSqlStore(databaseUrl);
  try {
    for (let start = 0; start < count; start += batch) {
      await store.uow.run(ownerScope(ownerId), async (stores) => {
        for (let i = start; i < Math.min(count, start + batch); i += 1) {
          const parsed = parseVineInput({
            name: `${prefix}-vine-${i}`,
            vineyard_id: vineyardId,
            source: { type: 'inline', files: { 'main.tf': MAIN_TF } },
            variables: { n: String(i) },
          });
          const now = new Date().toISOString();
          const vine = await stores.vines.create({
            id: randomUUID(),
            owner_id: ownerId,
            vineyard_id: parsed.vineyard_id,
            name: parsed.name,
            project_name: parsed.project_name,
            cloud_identity_id: null,
            source: parsed.source,
            variables: parsed.variables,
            engine: parsed.engine,
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
          const snapshot = snapshotOfVine(vine);
          await stores.jobs.create({
            id: randomUUID(),
            owner_id: ownerId,
            job_type: 'PLAN',
            status: 'QUEUED',
            config_snapshot: snapshot,
            config_hash: configHash(snapshot),
            vine_id: vine.id,
            vineyard_id: vine.vineyard_id,
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
            approval: null,
            policy_override: null,
            created_at: now,
            claimed_at: null,
            finished_at: null,
          });
        }
      });
    }
  } finally {
    await store.close();
  }
}

/** Claims the next job for `agent` through the use case (setup only). */
export async function claimFor(useCases, agent) {
  const claimed = await useCases.jobs.claim({ workerId: agent.workerId, ownerId: agent.ownerId });
  if (!claimed) throw new Error(`no job to claim for agent ${agent.workerId}`);
  return claimed.job;
}

/** A client speaking as an agent (`X-Worker-ID` + `X-Worker-Token`). */
export function agentClient(url, agent) {
  return new TrellisClient({
    baseUrl: url,
    auth: { kind: 'worker', workerId: agent.workerId, workerToken: agent.workerToken },
    userAgent: 'trellis-bench',
  });
}

/** A client speaking as the owner (CLI bearer token). */
export function userClient(url, owner) {
  return new TrellisClient({
    baseUrl: url,
    auth: { kind: 'bearer', accessToken: () => owner.accessToken },
    userAgent: 'trellis-bench',
  });
}
