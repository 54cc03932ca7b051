import type {
  CreateVineInput,
  Job,
  JobType,
  UnitOfWork,
  User,
  UserActor,
  VineView,
  VineyardView,
  WorkerActor,
} from '@trellis/core';
import type { TestCore } from './createTestCore.js';

/** Short builders for tests: each goes through the use cases, so the records are valid ones. */

let serial = 0;
function nextSerial(): number {
  serial += 1;
  return serial;
}

export interface TestUser extends UserActor {
  user: User;
}

export interface TestWorker extends WorkerActor {
  /** The plaintext token, as the registration returned it. */
  token: string;
}

export const DEFAULT_INLINE_FILES: Readonly<Record<string, string>> = {
  'main.tf': 'output "hello" {\n  value = "world"\n}\n',
};

export async function seedUser(
  core: TestCore<UnitOfWork>,
  input: { email?: string; name?: string } = {},
): Promise<TestUser> {
  const user = await core.useCases.auth.ensureUser({
    email: input.email ?? `user${nextSerial()}@example.test`,
    ...(input.name === undefined ? {} : { name: input.name }),
  });
  return { userId: user.id, email: user.email, user };
}

export async function seedVineyard(core: TestCore<UnitOfWork>, owner: UserActor, name?: string): Promise<VineyardView> {
  return core.useCases.vineyards.create(owner, { name: name ?? `vineyard-${nextSerial()}` });
}

/** A vine with an inline source; a vineyard is made for it unless `vineyard_id` is given. */
export async function seedVine(
  core: TestCore<UnitOfWork>,
  owner: UserActor,
  input: Partial<CreateVineInput> = {},
): Promise<VineView> {
  const vineyardId = input.vineyard_id ?? (await seedVineyard(core, owner)).id;
  return core.useCases.vines.create(owner, {
    name: `vine-${nextSerial()}`,
    source: { type: 'inline', files: { ...DEFAULT_INLINE_FILES } },
    ...input,
    vineyard_id: vineyardId,
  });
}

/** A registered worker, authenticated with its token; `heartbeat` makes it ONLINE first. */
export async function seedWorker(
  core: TestCore<UnitOfWork>,
  owner: UserActor,
  input: { name?: string; heartbeat?: boolean; version?: string } = {},
): Promise<TestWorker> {
  const registration = await core.useCases.workers.register(owner, { name: input.name ?? `worker-${nextSerial()}` });
  const actor = await core.useCases.workers.authenticate(registration.worker_id, registration.worker_token);
  if (input.heartbeat) await core.useCases.workers.heartbeat(actor, { version: input.version ?? '1.0.0' });
  return { ...actor, token: registration.worker_token };
}

/** Queues a job of `jobType` on the vine and has `worker` claim it; fails if it claims another. */
export async function seedRunningJob(
  core: TestCore<UnitOfWork>,
  owner: UserActor,
  worker: WorkerActor,
  vine: { id: string },
  jobType: Exclude<JobType, 'DESTROY_WORKER'> = 'PLAN',
): Promise<Job> {
  const job = await core.useCases.jobs.create(owner, { job_type: jobType, configuration_id: vine.id });
  const claimed = await core.useCases.jobs.claim(worker);
  if (claimed?.job.id !== job.id) throw new Error(`expected to claim job ${job.id}, got ${claimed?.job.id ?? 'none'}`);
  return claimed.job;
}
