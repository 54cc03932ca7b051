import { DEFAULT_CORE_SETTINGS, UnavailableError, type VineView } from '@trellis/core';
import {
  createTestCore,
  seedRunningJob,
  seedUser,
  seedVine,
  seedWorker,
  type TestCore,
  type TestUser,
  type TestWorker,
} from '@trellis/testkit/memory';
import { beforeEach, describe, expect, it } from 'vitest';

let core: TestCore;
let ada: TestUser;
let worker: TestWorker;

beforeEach(async () => {
  core = createTestCore();
  ada = await seedUser(core);
  worker = await seedWorker(core, ada);
});

const heartbeat = (w: TestWorker, version = '1.0.0') => core.useCases.workers.heartbeat(w, { version });
const stored = (w: TestWorker) => core.uow.snapshot().workers.get(w.workerId)!;
const status = async (w: TestWorker) => (await core.useCases.workers.get(ada.userId, w.workerId)).status;

describe('coalesced heartbeats', () => {
  it('writes the first heartbeat at once, queues steady ones and writes them all at the flush', async () => {
    const other = await seedWorker(core, ada, { name: 'other' });
    const first = core.clock.now().toISOString();
    await heartbeat(worker);
    await heartbeat(other);
    expect(stored(worker)).toMatchObject({ last_heartbeat: first, version: '1.0.0' });
    core.clock.advance({ seconds: 30 });
    const second = core.clock.now().toISOString();
    await heartbeat(worker, '1.1.0');
    await heartbeat(other, '1.1.0');
    // Queued: the database still has the first, and the agents still count as ONLINE by it.
    expect(stored(worker).last_heartbeat).toBe(first);
    expect(await status(worker)).toBe('ONLINE');
    expect(await core.useCases.workers.flushHeartbeats()).toBe(2);
    for (const w of [worker, other]) expect(stored(w)).toMatchObject({ last_heartbeat: second, version: '1.1.0' });
    expect(await core.useCases.workers.flushHeartbeats()).toBe(0);
  });

  it('keeps only the latest queued heartbeat of an agent', async () => {
    await heartbeat(worker);
    core.clock.advance({ seconds: 1 });
    await heartbeat(worker, '1.0.1');
    core.clock.advance({ seconds: 1 });
    await heartbeat(worker, '1.0.2');
    expect(await core.useCases.workers.flushHeartbeats()).toBe(1);
    expect(stored(worker)).toMatchObject({ last_heartbeat: core.clock.now().toISOString(), version: '1.0.2' });
  });

  it('writes at once the heartbeat that brings an OFFLINE agent back ONLINE', async () => {
    await heartbeat(worker);
    core.clock.advance({ seconds: DEFAULT_CORE_SETTINGS.heartbeatTimeoutSeconds + 1 });
    expect(await status(worker)).toBe('OFFLINE');
    await heartbeat(worker);
    expect(stored(worker).last_heartbeat).toBe(core.clock.now().toISOString());
    expect(await status(worker)).toBe('ONLINE');
  });

  it('writes at once once the last write is older than the timeout minus two flush intervals', async () => {
    const { heartbeatTimeoutSeconds, heartbeatFlushSeconds } = DEFAULT_CORE_SETTINGS;
    await heartbeat(worker);
    core.clock.advance({ seconds: heartbeatTimeoutSeconds - 2 * heartbeatFlushSeconds - 1 });
    await heartbeat(worker);
    expect(await core.useCases.workers.flushHeartbeats()).toBe(1);
    core.clock.advance({ seconds: heartbeatTimeoutSeconds - 2 * heartbeatFlushSeconds });
    await heartbeat(worker);
    expect(stored(worker).last_heartbeat).toBe(core.clock.now().toISOString());
    expect(await core.useCases.workers.flushHeartbeats()).toBe(0);
  });

  it('writes every heartbeat with its request when the flush interval is 0', async () => {
    core = createTestCore({ settings: { heartbeatFlushSeconds: 0 } });
    ada = await seedUser(core);
    worker = await seedWorker(core, ada);
    await heartbeat(worker);
    core.clock.advance({ seconds: 1 });
    await heartbeat(worker, '2.0.0');
    expect(stored(worker)).toMatchObject({ last_heartbeat: core.clock.now().toISOString(), version: '2.0.0' });
    expect(await core.useCases.workers.flushHeartbeats()).toBe(0);
  });

  it('keeps the queued heartbeats when a flush fails, and writes them at the next', async () => {
    await heartbeat(worker);
    core.clock.advance({ seconds: 10 });
    await heartbeat(worker);
    core.uow.setUnavailable(true);
    await expect(core.useCases.workers.flushHeartbeats()).rejects.toThrow(UnavailableError);
    core.uow.setUnavailable(false);
    expect(await core.useCases.workers.flushHeartbeats()).toBe(1);
    expect(stored(worker).last_heartbeat).toBe(core.clock.now().toISOString());
  });
});

describe('the lost-agent sweep with coalesced heartbeats', () => {
  let vine: VineView;

  beforeEach(async () => {
    vine = await seedVine(core, ada);
  });

  it('reads the queued heartbeats of its own replica: an agent heard from is never lost', async () => {
    const job = await seedRunningJob(core, ada, worker, vine);
    await heartbeat(worker);
    for (let i = 0; i < 6; i++) {
      core.clock.advance({ seconds: 30 });
      await heartbeat(worker);
      expect(await core.useCases.jobs.sweepLostJobs()).toEqual([]);
    }
    expect(core.uow.snapshot().jobs.get(job.id)?.status).toBe('PROCESSING');
    expect(stored(worker).last_heartbeat).toBe(core.clock.now().toISOString());
  });

  it('spares the job of an agent whose heartbeat is still queued after a failed flush', async () => {
    const job = await seedRunningJob(core, ada, worker, vine);
    await heartbeat(worker);
    core.clock.advance({ seconds: 50 });
    await heartbeat(worker);
    core.uow.setUnavailable(true);
    await expect(core.useCases.workers.flushHeartbeats()).rejects.toThrow(UnavailableError);
    core.uow.setUnavailable(false);
    // The stored heartbeat is 121 s old; the queued one, 71 s: the sweep writes it before it reads.
    core.clock.advance({ seconds: 71 });
    expect(await core.useCases.jobs.sweepLostJobs()).toEqual([]);
    expect(core.uow.snapshot().jobs.get(job.id)?.status).toBe('PROCESSING');
  });

  it('still fails the job of an agent silent past the lost-job timeout', async () => {
    const job = await seedRunningJob(core, ada, worker, vine);
    await heartbeat(worker);
    core.clock.advance({ seconds: 10 });
    await heartbeat(worker);
    core.clock.advance({ seconds: DEFAULT_CORE_SETTINGS.lostJobTimeoutSeconds + 1 });
    const failed = await core.useCases.jobs.sweepLostJobs();
    expect(failed.map((j) => j.id)).toEqual([job.id]);
  });
});
