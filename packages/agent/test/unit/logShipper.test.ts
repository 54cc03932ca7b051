import { describe, expect, it } from 'vitest';
import { Backoff } from '@trellis/client';
import { AgentLogger } from '../../src/logging/AgentLogger.js';
import { LogShipper } from '../../src/logs/LogShipper.js';
import { FakeLogApi } from '../support/fakeLogApi.js';
import { ManualClock, tick } from '../support/manualClock.js';

const quiet = new AgentLogger('silent');
const fastBackoff = () => new Backoff({ initialMs: 1, maxMs: 2 });

function shipper(api: FakeLogApi, options: Partial<ConstructorParameters<typeof LogShipper>[0]> = {}) {
  return new LogShipper({ api, jobId: 'job', logger: quiet, backoff: fastBackoff(), ...options });
}

const lines = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => `line ${from + i}\n`).join('');

describe('shipping a job log', () => {
  it('keeps the order of lines across streams, one chunk per run of a stream', async () => {
    const api = new FakeLogApi();
    const ship = shipper(api);
    ship.append('SYSTEM', '$ tofu plan\n');
    ship.append('STDOUT', 'a\n');
    ship.append('STDOUT', 'b\n');
    ship.append('STDERR', 'Error: x\n');
    ship.append('STDOUT', 'c\n');
    await ship.close();
    expect(api.stored.map((log) => [log.stream_type, log.log_chunk])).toEqual([
      ['SYSTEM', '$ tofu plan\n'],
      ['STDOUT', 'a\nb\n'],
      ['STDERR', 'Error: x\n'],
      ['STDOUT', 'c\n'],
    ]);
  });

  it('cuts chunks under the limit, at line ends, without splitting a character', async () => {
    const api = new FakeLogApi();
    const ship = shipper(api, { maxChunkBytes: 1000 });
    const text = Array.from({ length: 300 }, (_, i) => `ligne ${i} été ✓ 🌿\n`).join('');
    ship.append('STDOUT', text);
    await ship.close();
    expect(api.text()).toBe(text);
    for (const log of api.stored) {
      expect(Buffer.byteLength(log.log_chunk)).toBeLessThanOrEqual(1000);
      expect(log.log_chunk.endsWith('\n')).toBe(true);
    }
    expect(api.stored.length).toBeGreaterThan(5);
  });

  it('cuts a huge line with no newline at a character boundary', async () => {
    const api = new FakeLogApi();
    const ship = shipper(api, { maxChunkBytes: 1001 });
    const text = '🌿é'.repeat(2000);
    ship.append('STDOUT', text);
    await ship.close();
    expect(api.text()).toBe(text);
    expect(api.stored.every((log) => Buffer.byteLength(log.log_chunk) <= 1001)).toBe(true);
  });

  it('retries a post that never reached the server', async () => {
    const api = new FakeLogApi();
    api.faults.push('refuse', 'server-error', 'refuse');
    const ship = shipper(api);
    ship.append('STDOUT', lines(1, 3));
    await ship.close();
    expect(api.text()).toBe(lines(1, 3));
    expect(api.stored).toHaveLength(1);
  });

  it('stores a chunk exactly once when the answer to a post that landed was lost', async () => {
    const api = new FakeLogApi();
    const ship = shipper(api);
    ship.append('STDOUT', lines(1, 2));
    await ship.flush();
    api.faults.push('lose-answer');
    ship.append('STDOUT', lines(3, 4));
    await ship.flush();
    ship.append('STDERR', lines(5, 5));
    await ship.close();
    expect(api.stored.map((log) => log.log_chunk)).toEqual([lines(1, 2), lines(3, 4), lines(5, 5)]);
    expect(ship.stats.duplicatesAvoided).toBe(1);
  });

  it('says so in their place when the control plane lost chunks it had stored, and goes on', async () => {
    const api = new FakeLogApi();
    let gone = 0;
    const ship = shipper(api, { onJobGone: () => gone++ });
    ship.append('STDOUT', lines(1, 2));
    await ship.flush();
    ship.append('STDERR', lines(3, 3));
    await ship.flush();
    api.forget(2); // both batches were answered as stored, then lost
    ship.append('STDOUT', lines(4, 5));
    await ship.close();
    expect(gone).toBe(0);
    expect(api.stored.map((log) => [log.stream_type, log.log_chunk])).toEqual([
      ['SYSTEM', '[trellis-agent] 2 log chunks the control plane had stored went missing there (seq 1–2)\n'],
      ['SYSTEM', ''],
      ['STDOUT', lines(4, 5)],
    ]);
  });

  it('re-posts a chunk identical to an earlier one when only the earlier one landed', async () => {
    const api = new FakeLogApi();
    const ship = shipper(api);
    ship.append('STDOUT', 'same\n');
    await ship.flush();
    api.faults.push('refuse');
    ship.append('STDOUT', 'same\n');
    await ship.close();
    expect(api.stored.map((log) => log.log_chunk)).toEqual(['same\n', 'same\n']);
  });

  it('reports the job status of every answer (a cancel stops the job)', async () => {
    const api = new FakeLogApi();
    const statuses: string[] = [];
    const ship = shipper(api, { onJobStatus: (status) => statuses.push(status) });
    ship.append('STDOUT', 'a\n');
    await ship.flush();
    api.status = 'CANCELLED';
    ship.append('STDOUT', 'b\n');
    await ship.close();
    expect(statuses).toEqual(['PROCESSING', 'CANCELLED']);
  });

  it('stops shipping, and says so once, when the job takes no more logs', async () => {
    const api = new FakeLogApi();
    let gone = 0;
    const ship = shipper(api, { onJobGone: () => gone++ });
    api.faults.push('gone');
    ship.append('STDOUT', 'a\n');
    await ship.flush();
    ship.append('STDOUT', 'b\n');
    await ship.close();
    expect(gone).toBe(1);
    expect(ship.jobGone).toBe(true);
    expect(api.stored).toHaveLength(0);
  });

  it('stops posting without retrying when the log is closed after a cancel (409 job_log_closed)', async () => {
    const api = new FakeLogApi();
    let gone = 0;
    const ship = shipper(api, { onJobGone: () => gone++ });
    api.faults.push('closed');
    ship.append('STDOUT', 'a\n');
    await ship.flush();
    ship.append('STDOUT', 'b\n');
    await ship.close();
    expect([api.posts, gone, ship.jobGone, ship.stats.retries]).toEqual([1, 1, true, 0]);
  });

  it('stops posting once the server cut the log at its cap, and lets the job run on', async () => {
    const api = new FakeLogApi();
    let gone = 0;
    const ship = shipper(api, { onJobGone: () => gone++, maxChunkBytes: 10 });
    ship.append('STDOUT', 'first\n');
    await ship.flush();
    api.faults.push('cut');
    ship.append('STDOUT', 'x'.repeat(50));
    await ship.flush();
    const postsAtCut = api.posts;
    for (let i = 0; i < 100; i += 1) ship.append('STDOUT', `more ${i}\n`);
    await ship.close();
    expect(api.posts).toBe(postsAtCut);
    expect([ship.logCut, ship.jobGone, gone, ship.pendingBytes, ship.full]).toEqual([true, false, 0, 0, false]);
    expect(api.text()).toBe('first\n');
  });

  it('asks the producer to wait above the high-water mark and lets it go once shipped', async () => {
    const api = new FakeLogApi();
    const ship = shipper(api, { highWaterBytes: 100, maxChunkBytes: 1_000_000 });
    ship.append('STDOUT', 'x'.repeat(150));
    expect(ship.full).toBe(true);
    const room = ship.waitForRoom();
    await ship.flush();
    await room;
    expect(ship.full).toBe(false);
  });

  it('gives up after the close timeout while the server stays down, so the status can be reported', async () => {
    const api = new FakeLogApi();
    api.faults.push(...Array.from({ length: 10_000 }, () => 'refuse' as const));
    const clock = new ManualClock();
    const ship = new LogShipper({
      api,
      jobId: 'job',
      logger: quiet,
      backoff: new Backoff({ initialMs: 20, maxMs: 20 }),
      clock,
    });
    ship.append('STDOUT', 'lost\n');
    let closed = false;
    const closing = ship.close(200).then(() => {
      closed = true;
    });
    while (!closed) await tick(clock, 10);
    await closing;
    expect(clock.now().getTime()).toBeGreaterThanOrEqual(180);
    expect(ship.stats.retries).toBeGreaterThan(3);
    expect(api.stored).toHaveLength(0);
    expect(ship.pendingBytes).toBe(0);
  });
});
