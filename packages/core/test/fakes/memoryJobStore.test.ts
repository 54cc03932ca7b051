import { type Job, ownerScope, type Stores, systemScope } from '@trellis/core';
import { MemoryUnitOfWork } from '@trellis/testkit/memory';
import { beforeEach, describe, expect, it } from 'vitest';
import { at, id, jobRecord, OWNER_A, OWNER_B, workerRecord } from './records.js';

/** The JobStore fake, held to the port's doc comments (the SQL stores pass the same conformance suite). */
let uow: MemoryUnitOfWork;
const sys = <T>(work: (stores: Stores) => Promise<T>) => uow.run(systemScope, work);
const add = (...jobs: Job[]) => sys(async (s) => Promise.all(jobs.map((job) => s.jobs.create(job))));
const claim = async (workerId: string, owner = OWNER_A, when = at(100)) =>
  (await sys((s) => s.jobs.claimNext({ id: workerId, owner_id: owner }, when)))?.job ?? null;

beforeEach(() => {
  uow = new MemoryUnitOfWork();
});

describe('JobStore.claimNext', () => {
  const workerA = id();
  const workerB = id();

  it('returns null when nothing is queued', async () => {
    expect(await claim(workerA)).toBeNull();
    await add(jobRecord({ status: 'SUCCESS' }), jobRecord({ status: 'CANCELLED' }));
    expect(await claim(workerA)).toBeNull();
  });

  it('takes the oldest queued job by creation time, and marks it claimed', async () => {
    const newer = jobRecord({ created_at: at(2) });
    const older = jobRecord({ created_at: at(1) });
    await add(newer, older);
    const claimed = await claim(workerA, OWNER_A, at(50));
    expect(claimed).toMatchObject({
      id: older.id,
      status: 'PROCESSING',
      claimed_by_worker_id: workerA,
      claimed_at: at(50),
    });
    expect(await sys((s) => s.jobs.get(OWNER_A, older.id))).toEqual(claimed);
    expect((await claim(workerA))?.id).toBe(newer.id);
    expect(await claim(workerA)).toBeNull();
  });

  it('breaks ties of creation time by insertion order', async () => {
    const first = jobRecord();
    const second = jobRecord();
    await add(first, second);
    expect((await claim(workerA))?.id).toBe(first.id);
  });

  it("never takes another owner's job", async () => {
    await add(jobRecord({ owner_id: OWNER_B }));
    expect(await claim(workerA, OWNER_A)).toBeNull();
    expect(await claim(workerB, OWNER_B)).not.toBeNull();
  });

  it('takes jobs assigned to nobody or to the worker only', async () => {
    const forB = jobRecord({ assigned_worker_id: workerB, created_at: at(1) });
    const forA = jobRecord({ assigned_worker_id: workerA, created_at: at(2) });
    await add(forB, forA);
    expect((await claim(workerA))?.id).toBe(forA.id);
    expect(await claim(workerA)).toBeNull();
    expect((await claim(workerB))?.id).toBe(forB.id);
  });

  it('never gives a DESTROY_WORKER job to the worker it destroys', async () => {
    const destroyA = jobRecord({ job_type: 'DESTROY_WORKER', target_worker_id: workerA });
    await add(destroyA);
    expect(await claim(workerA)).toBeNull();
    expect((await claim(workerB))?.id).toBe(destroyA.id);
  });

  it('runs one job per vine at a time', async () => {
    const vine = id();
    const otherVine = id();
    await add(
      jobRecord({ vine_id: vine, created_at: at(1) }),
      jobRecord({ vine_id: vine, created_at: at(2) }),
      jobRecord({ vine_id: otherVine, created_at: at(3) }),
    );
    const first = await claim(workerA);
    expect(first?.vine_id).toBe(vine);
    const second = await claim(workerB);
    expect(second?.vine_id).toBe(otherVine);
    expect(await claim(workerB)).toBeNull();
    await sys((s) => s.jobs.update(OWNER_A, first!.id, 'PROCESSING', { status: 'SUCCESS' }));
    expect((await claim(workerB))?.vine_id).toBe(vine);
  });

  it('is FIFO per vine: a later job of a vine waits for the oldest one, even if another worker must take it', async () => {
    const vine = id();
    const head = jobRecord({ vine_id: vine, assigned_worker_id: workerB, created_at: at(1) });
    const next = jobRecord({ vine_id: vine, created_at: at(2) });
    await add(head, next);
    expect(await claim(workerA)).toBeNull();
    expect((await claim(workerB))?.id).toBe(head.id);
  });

  it('never hands one job to two concurrent claimers', async () => {
    await add(...Array.from({ length: 5 }, (_, i) => jobRecord({ created_at: at(i) })));
    const workers = Array.from({ length: 8 }, () => id());
    const results = await Promise.all(workers.map((worker) => claim(worker)));
    const ids = results.filter((job) => job !== null).map((job) => job!.id);
    expect(ids).toHaveLength(5);
    expect(new Set(ids).size).toBe(5);
  });

  it('never runs two jobs of a vine under concurrent claims', async () => {
    const vine = id();
    await add(...Array.from({ length: 4 }, (_, i) => jobRecord({ vine_id: vine, created_at: at(i) })));
    const results = await Promise.all([id(), id(), id()].map((worker) => claim(worker)));
    expect(results.filter((job) => job !== null)).toHaveLength(1);
  });
});

describe('JobStore.update', () => {
  it('applies the patch only while the job is in the expected status', async () => {
    const job = jobRecord({ status: 'PROCESSING' });
    await add(job);
    expect(await sys((s) => s.jobs.update(OWNER_A, job.id, 'QUEUED', { status: 'FAILED' }))).toBeNull();
    const updated = await sys((s) =>
      s.jobs.update(OWNER_A, job.id, 'PROCESSING', {
        status: 'FAILED',
        error_message: 'boom',
        finished_at: at(9),
        execution_metadata: { a: 1 },
        vine_status_before: 'PLANNED',
      }),
    );
    expect(updated).toEqual({
      ...job,
      status: 'FAILED',
      error_message: 'boom',
      finished_at: at(9),
      execution_metadata: { a: 1 },
      vine_status_before: 'PLANNED',
    });
    expect(await sys((s) => s.jobs.update(OWNER_A, job.id, 'PROCESSING', { status: 'SUCCESS' }))).toBeNull();
    expect((await sys((s) => s.jobs.get(OWNER_A, job.id)))?.status).toBe('FAILED');
  });

  it('leaves fields that are not in the patch alone, and changes nothing of another owner', async () => {
    const job = jobRecord({ error_message: 'keep', execution_metadata: { k: 'v' } });
    await add(job);
    expect(await sys((s) => s.jobs.update(OWNER_B, job.id, 'QUEUED', { status: 'CANCELLED' }))).toBeNull();
    const updated = await sys((s) =>
      s.jobs.update(OWNER_A, job.id, 'QUEUED', { status: 'CANCELLED', owner_id: OWNER_B } as never),
    );
    expect(updated).toEqual({ ...job, status: 'CANCELLED' });
    expect(await sys((s) => s.jobs.update(OWNER_A, id(), 'QUEUED', { status: 'CANCELLED' }))).toBeNull();
  });
});

describe('JobStore reads', () => {
  it('get and list never show another owner', async () => {
    const mine = jobRecord();
    const theirs = jobRecord({ owner_id: OWNER_B });
    await add(mine, theirs);
    expect(await sys((s) => s.jobs.get(OWNER_A, theirs.id))).toBeNull();
    expect((await sys((s) => s.jobs.list(OWNER_A))).map((job) => job.id)).toEqual([mine.id]);
  });

  it('list is newest first and filters by status, vineyard and vine', async () => {
    const vineyard = id();
    const vine = id();
    const a = jobRecord({ created_at: at(1), vineyard_id: vineyard, vine_id: vine });
    const b = jobRecord({ created_at: at(3), status: 'SUCCESS' });
    const c = jobRecord({ created_at: at(2), vineyard_id: vineyard });
    await add(a, b, c);
    const ids = async (filter = {}) => (await sys((s) => s.jobs.list(OWNER_A, filter))).map((job) => job.id);
    expect(await ids()).toEqual([b.id, c.id, a.id]);
    expect(await ids({ status: 'QUEUED' })).toEqual([c.id, a.id]);
    expect(await ids({ vineyard_id: vineyard })).toEqual([c.id, a.id]);
    expect(await ids({ vine_id: vine })).toEqual([a.id]);
    expect(await ids({ vineyard_id: vineyard, status: 'SUCCESS' })).toEqual([]);
  });

  it('list puts the later of two same-time jobs first', async () => {
    const first = jobRecord();
    const second = jobRecord();
    await add(first, second);
    expect((await sys((s) => s.jobs.list(OWNER_A))).map((job) => job.id)).toEqual([second.id, first.id]);
  });

  it('listLost finds PROCESSING jobs of any owner whose worker was last heard of before the cutoff', async () => {
    const silent = workerRecord({ last_heartbeat: at(10) });
    const alive = workerRecord({ last_heartbeat: at(100) });
    const never = workerRecord({ owner_id: OWNER_B, last_heartbeat: null });
    await sys(async (s) => {
      for (const worker of [silent, alive, never]) await s.workers.create(worker);
    });
    const lost = jobRecord({ status: 'PROCESSING', claimed_by_worker_id: silent.id, claimed_at: at(5) });
    const fine = jobRecord({ status: 'PROCESSING', claimed_by_worker_id: alive.id, claimed_at: at(5) });
    const neverHeard = jobRecord({
      owner_id: OWNER_B,
      status: 'PROCESSING',
      claimed_by_worker_id: never.id,
      claimed_at: at(20),
    });
    const done = jobRecord({ status: 'SUCCESS', claimed_by_worker_id: silent.id, claimed_at: at(5) });
    await add(lost, fine, neverHeard, done);
    expect((await sys((s) => s.jobs.listLost(at(50)))).map((job) => job.id).sort()).toEqual(
      [lost.id, neverHeard.id].sort(),
    );
    expect((await sys((s) => s.jobs.listLost(at(15)))).map((job) => job.id)).toEqual([lost.id]);
    expect(await sys((s) => s.jobs.listLost(at(10)))).toEqual([]);
  });

  it('listCancelledForWorker lists the worker’s jobs cancelled at or after `since`', async () => {
    const worker = id();
    const recent = jobRecord({ status: 'CANCELLED', claimed_by_worker_id: worker, finished_at: at(30) });
    const boundary = jobRecord({ status: 'CANCELLED', claimed_by_worker_id: worker, finished_at: at(20) });
    const old = jobRecord({ status: 'CANCELLED', claimed_by_worker_id: worker, finished_at: at(10) });
    const otherWorker = jobRecord({ status: 'CANCELLED', claimed_by_worker_id: id(), finished_at: at(30) });
    const failed = jobRecord({ status: 'FAILED', claimed_by_worker_id: worker, finished_at: at(30) });
    await add(recent, boundary, old, otherWorker, failed);
    expect((await sys((s) => s.jobs.listCancelledForWorker(OWNER_A, worker, at(20)))).sort()).toEqual(
      [recent.id, boundary.id].sort(),
    );
    expect(await sys((s) => s.jobs.listCancelledForWorker(OWNER_B, worker, at(0)))).toEqual([]);
  });

  it('busyWorkerIds lists each worker with a PROCESSING job once', async () => {
    const w1 = id();
    const w2 = id();
    await add(
      jobRecord({ status: 'PROCESSING', claimed_by_worker_id: w1 }),
      jobRecord({ status: 'PROCESSING', claimed_by_worker_id: w1 }),
      jobRecord({ status: 'SUCCESS', claimed_by_worker_id: w2 }),
      jobRecord({ owner_id: OWNER_B, status: 'PROCESSING', claimed_by_worker_id: w2 }),
    );
    expect(await sys((s) => s.jobs.busyWorkerIds(OWNER_A))).toEqual([w1]);
  });

  it('listDeploysOfPlan lists DEPLOY jobs of the plan that are queued, running or succeeded', async () => {
    const plan = id();
    const statuses = ['QUEUED', 'PROCESSING', 'SUCCESS', 'FAILED', 'CANCELLED'] as const;
    const deploys = statuses.map((status) => jobRecord({ job_type: 'DEPLOY', plan_job_id: plan, status }));
    await add(...deploys, jobRecord({ job_type: 'DEPLOY', plan_job_id: id() }));
    const found = await sys((s) => s.jobs.listDeploysOfPlan(OWNER_A, plan));
    expect(found.map((job) => job.status).sort()).toEqual(['PROCESSING', 'QUEUED', 'SUCCESS']);
    expect(await sys((s) => s.jobs.listDeploysOfPlan(OWNER_B, plan))).toEqual([]);
  });

  it('hands out copies: changing a returned job changes nothing stored', async () => {
    const job = jobRecord({ execution_metadata: { a: 1 } });
    await add(job);
    job.execution_metadata.a = 2;
    const read = await sys((s) => s.jobs.get(OWNER_A, job.id));
    expect(read?.execution_metadata).toEqual({ a: 1 });
    read!.status = 'FAILED';
    (read!.execution_metadata as Record<string, number>).a = 3;
    expect(await sys((s) => s.jobs.get(OWNER_A, job.id))).toMatchObject({
      status: 'QUEUED',
      execution_metadata: { a: 1 },
    });
  });

  it('refuses a second job with the same id', async () => {
    const job = jobRecord();
    await add(job);
    await expect(add(job)).rejects.toMatchObject({ kind: 'conflict' });
  });

  it('in owner scope sees only that owner, like row-level security', async () => {
    const theirs = jobRecord({ owner_id: OWNER_B });
    await add(theirs);
    await expect(uow.run(ownerScope(OWNER_A), (s) => s.jobs.get(OWNER_B, theirs.id))).resolves.toBeNull();
    await expect(uow.run(ownerScope(OWNER_A), (s) => s.jobs.create(jobRecord({ owner_id: OWNER_B })))).rejects.toThrow(
      /row-level security/,
    );
  });
});
