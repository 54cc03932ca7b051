/**
 * Live-log streams under load (issue 10, findings 1 and 6), against the real server over HTTP:
 * clients that stop reading cost the server a bounded number of bytes each (read from the
 * server's own stream counters, never from timing) and resume without losing or doubling a chunk;
 * open streams are capped per user and per job; and another user's refused stream requests never
 * touch the owner's stream.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import type { LiveLogStats } from '@trellis/http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningControlPlane, startControlPlane, vineyardWithConfiguration } from './support/controlPlane.js';
import { describeEachDialect } from './support/dialects.js';

const MIB = 1024 * 1024;

/** Polls the server's counters until `ready` holds (no assertion on how long that takes). */
async function until(server: RunningControlPlane, ready: (stats: LiveLogStats) => boolean): Promise<LiveLogStats> {
  for (let attempt = 0; attempt < 3000; attempt++) {
    const stats = server.controlPlane.logStreams.stats();
    if (ready(stats)) return stats;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`stream counters never got there: ${JSON.stringify(server.controlPlane.logStreams.stats())}`);
}

/** A stream whose body is not read until `text()` is called: a client that stopped reading. */
interface HeldStream {
  status: number;
  headers: IncomingMessage['headers'];
  text(): Promise<string>;
  destroy(): void;
}

function openStream(url: string, token: string, headers: Record<string, string> = {}): Promise<HeldStream> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { agent: false, headers: { authorization: `Bearer ${token}`, ...headers } });
    req.on('error', reject);
    req.on('response', (res) => {
      // No 'data' listener: the body stays in the socket, and the socket stops being read.
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        async text() {
          res.setEncoding('utf8');
          let body = '';
          for await (const part of res) body += part;
          return body;
        },
        destroy: () => req.destroy(),
      });
    });
    req.end();
  });
}

interface ParsedEvent {
  event: string;
  id: number | null;
  data: { id?: number; log_chunk?: string; status?: string };
}

function parseEvents(text: string): ParsedEvent[] {
  const events: ParsedEvent[] = [];
  for (const block of text.split('\n\n')) {
    const event = /^event: (.*)$/m.exec(block)?.[1];
    const data = /^data: (.*)$/m.exec(block)?.[1];
    if (!event || data === undefined) continue;
    const id = /^id: (\d+)$/m.exec(block)?.[1];
    events.push({ event, id: id === undefined ? null : Number(id), data: JSON.parse(data) });
  }
  return events;
}

const logsOf = (events: ParsedEvent[]) => events.flatMap((e) => (e.event === 'log' ? [e.data.log_chunk ?? ''] : []));

/** A log chunk of `size` bytes that says which one it is. */
const bulky = (index: number, size: number) => `chunk ${index} `.padEnd(size - 1, 'x').concat('\n');

describeEachDialect('live-log streams under load', (dialect) => {
  let server: RunningControlPlane;
  let token: string;

  beforeAll(async () => {
    server = await startControlPlane(dialect, {
      env: { TRELLIS_STREAMS_PER_USER: '3', TRELLIS_STREAMS_PER_JOB: '2' },
    });
    token = await server.accessToken('slow@example.com');
  });
  afterAll(async () => {
    await server?.close();
  });

  async function runningJob(email: string, name: string) {
    const user = await server.userClient(email);
    const { configuration } = await vineyardWithConfiguration(user, name);
    const job = await user.createJob({ job_type: 'PLAN', configuration_id: configuration.id });
    const agent = await server.agentClient(user, `${name}-agent`);
    expect((await agent.claimJob())?.job.id).toBe(job.id);
    return { job, agent };
  }

  const streamUrl = (jobId: string) => `${server.url}/api/jobs/${jobId}/logs/stream`;

  it('bounds the bytes held for live followers that stop reading, ends them, and they resume exactly', {
    timeout: 120_000,
  }, async () => {
    const { job, agent } = await runningJob('slow@example.com', 'slow-live');
    const before = server.controlPlane.logStreams.stats();
    const held = [await openStream(streamUrl(job.id), token), await openStream(streamUrl(job.id), token)];
    expect(held.map((stream) => stream.status)).toEqual([200, 200]);
    await until(server, (stats) => stats.live === 2);

    // 30 MiB each, far more than the socket buffers of the kernel can take.
    const count = 40;
    const expected = Array.from({ length: count }, (_, i) => bulky(i, 768 * 1024));
    for (const text of expected) await agent.appendLog(job.id, text, 'STDOUT');
    await agent.reportStatus(job.id, { status: 'SUCCESS' });

    const stats = await until(server, (s) => s.overflowed >= before.overflowed + 2);
    const limit = server.controlPlane.logStreams.limits.maxBufferBytes;
    expect(limit).toBe(MIB);
    expect(stats.maxBufferedBytes).toBeLessThanOrEqual(limit);

    // The clients read again: each finds part of the log, ended between events and without `end`.
    const firsts = (await Promise.all(held.map((stream) => stream.text()))).map(parseEvents);
    await until(server, (s) => s.open === 0);
    for (const first of firsts) {
      expect(first.some((e) => e.event === 'end')).toBe(false);
      const received = logsOf(first);
      expect(received.length).toBeLessThan(count);
      expect(received).toEqual(expected.slice(0, received.length));
      // What an EventSource does next: reconnect with the last id it saw.
      const lastId = first.filter((e) => e.event === 'log').at(-1)?.id ?? 0;
      const again = await fetch(streamUrl(job.id), {
        headers: { authorization: `Bearer ${token}`, 'last-event-id': String(lastId) },
      });
      const rest = parseEvents(await again.text());
      expect([...received, ...logsOf(rest)]).toEqual(expected);
      expect(rest.at(-1)).toMatchObject({ event: 'end', data: { status: 'SUCCESS' } });
    }
    await until(server, (s) => s.open === 0);
  });

  it('reads a backlog only as fast as the client takes it', { timeout: 120_000 }, async () => {
    const { job, agent } = await runningJob('slow@example.com', 'slow-backlog');
    // 16 MiB of backlog, far more than the socket buffers of the kernel can take.
    const count = 1010;
    const expected = Array.from({ length: count }, (_, i) => bulky(i, 16 * 1024));
    // Written through the use cases (as the agent), which is quicker than a thousand requests.
    const { useCases } = server.controlPlane;
    const worker = await useCases.workers.authenticate(agent.workerId, agent.workerToken);
    for (const text of expected) await useCases.logs.append(worker, job.id, { log_chunk: text, stream_type: 'STDOUT' });
    await agent.reportStatus(job.id, { status: 'SUCCESS' });

    const before = server.controlPlane.logStreams.stats();
    const limit = server.controlPlane.logStreams.limits.maxBufferBytes;
    const held = await openStream(streamUrl(job.id), token);
    // Paused on a client that reads nothing: nothing piles up, and no page is read meanwhile.
    const stalled = await until(server, (s) => s.waiting === 1 && s.bufferedBytes > 0);
    expect(stalled.bufferedBytes).toBeLessThanOrEqual(limit);
    expect(stalled.maxBufferedBytes).toBeLessThanOrEqual(limit);
    expect(server.controlPlane.logStreams.stats().backlogPages).toBe(stalled.backlogPages);

    const events = parseEvents(await held.text());
    expect(logsOf(events)).toEqual(expected);
    expect(events.at(-1)).toMatchObject({ event: 'end', data: { status: 'SUCCESS' } });
    const after = await until(server, (s) => s.open === 0);
    // Most of the backlog was read only once the client read what came before it: pages of about
    // `limit` bytes (16 chunks, then 64), 17 in all.
    expect(stalled.backlogPages - before.backlogPages).toBeLessThan(after.backlogPages - before.backlogPages);
    expect(after.backlogPages - before.backlogPages).toBe(17);
    expect(after.overflowed).toBe(before.overflowed);
  });

  it('caps open streams per job and per user with 429 too_many_streams and Retry-After', async () => {
    const jobs = [
      (await runningJob('slow@example.com', 'cap-1')).job,
      (await runningJob('slow@example.com', 'cap-2')).job,
      (await runningJob('slow@example.com', 'cap-3')).job,
    ];
    const [one, two, three] = jobs.map((job) => job.id) as [string, string, string];
    const before = server.controlPlane.logStreams.stats();
    const open = [await openStream(streamUrl(one), token), await openStream(streamUrl(one), token)];
    expect(open.map((s) => s.status)).toEqual([200, 200]);

    const perJob = await fetch(streamUrl(one), { headers: { authorization: `Bearer ${token}` } });
    expect(perJob.status).toBe(429);
    expect(perJob.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect(await perJob.json()).toMatchObject({ status: 429, code: 'too_many_streams' });

    open.push(await openStream(streamUrl(two), token));
    expect(open[2]?.status).toBe(200);
    const perUser = await fetch(streamUrl(three), { headers: { authorization: `Bearer ${token}` } });
    expect(perUser.status).toBe(429);
    expect(perUser.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect(await perUser.json()).toMatchObject({ code: 'too_many_streams' });

    // Another user is not held back by this one's streams.
    const other = await runningJob('other@example.com', 'cap-other');
    const otherStream = await openStream(streamUrl(other.job.id), await server.accessToken('other@example.com'));
    expect(otherStream.status).toBe(200);
    otherStream.destroy();

    expect(server.controlPlane.logStreams.stats().refused).toBe(before.refused + 2);
    // A closed stream frees its slot.
    open.shift()?.destroy();
    await until(server, (s) => s.open === before.open + 2);
    const freed = await openStream(streamUrl(three), token);
    expect(freed.status).toBe(200);
    for (const stream of [...open, freed]) stream.destroy();
    await until(server, (s) => s.open === 0);
  });

  it("leaves the owner's stream intact through another user's refused stream requests", async () => {
    const { job, agent } = await runningJob('alice@example.com', 'owned');
    const alice = await server.accessToken('alice@example.com');
    const bob = await server.accessToken('bob@example.com');
    await agent.appendLog(job.id, 'before\n', 'STDOUT');
    const before = server.controlPlane.logStreams.stats();

    const attempt = async () => {
      const response = await fetch(streamUrl(job.id), { headers: { authorization: `Bearer ${bob}` } });
      await response.body?.cancel();
      return response.status;
    };
    let sent = 0;
    const flood = async () => {
      const statuses: number[] = [];
      while (sent < 300) {
        sent += 1;
        statuses.push(await attempt());
      }
      return statuses;
    };
    const flooding = Promise.all(Array.from({ length: 20 }, flood));
    // Alice opens her stream while Bob's requests are in flight, as in the report.
    while (sent < 100) await new Promise((resolve) => setTimeout(resolve, 5));
    const aliceStream = fetch(streamUrl(job.id), { headers: { authorization: `Bearer ${alice}` } }).then((r) =>
      r.text(),
    );
    await until(server, (s) => s.live === before.live + 1);
    const statuses = (await flooding).flat();
    expect(statuses).toHaveLength(300);
    expect(new Set(statuses)).toEqual(new Set([404]));

    const stats = server.controlPlane.logStreams.stats();
    // Bob never got as far as the hub: one follower (Alice's), one reader, as Alice.
    expect(stats.followed).toBe(before.followed + 1);
    expect(stats.followedJobs).toBe(before.followedJobs + 1);
    expect(stats.refused).toBe(before.refused);

    for (let i = 0; i < 5; i++) await agent.appendLog(job.id, `after ${i}\n`, 'STDOUT');
    await agent.reportStatus(job.id, { status: 'SUCCESS' });
    const events = parseEvents(await aliceStream);
    expect(logsOf(events)).toEqual(['before\n', ...Array.from({ length: 5 }, (_, i) => `after ${i}\n`)]);
    expect(events.at(-1)).toMatchObject({ event: 'end', data: { status: 'SUCCESS' } });
  });
});
