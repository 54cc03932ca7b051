import type { LogStreamEvent, TrellisClient } from '@trellis/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningControlPlane, startControlPlane, vineyardWithConfiguration } from './support/controlPlane.js';
import { describeEachDialect } from './support/dialects.js';

/** Collects stream events until `end` (or until `stopAfter` log events). */
async function collect(stream: AsyncGenerator<LogStreamEvent>, stopAfter = Number.POSITIVE_INFINITY) {
  const events: LogStreamEvent[] = [];
  let logs = 0;
  for await (const event of stream) {
    events.push(event);
    if (event.type === 'log' && ++logs >= stopAfter) break;
  }
  return events;
}

describeEachDialect('live job logs (SSE)', (dialect) => {
  let server: RunningControlPlane;
  let user: TrellisClient;

  beforeAll(async () => {
    server = await startControlPlane(dialect);
    user = await server.userClient('streamer@example.com');
  });
  afterAll(async () => {
    await server?.close();
  });

  async function runningJob(name: string) {
    const { configuration } = await vineyardWithConfiguration(user, name);
    const job = await user.createJob({ job_type: 'PLAN', configuration_id: configuration.id });
    const agent = await server.agentClient(user, `${name}-agent`);
    expect((await agent.claimJob())?.job.id).toBe(job.id);
    return { job, agent };
  }

  it('sends the backlog, then live chunks and status changes, then end', async () => {
    const { job, agent } = await runningJob('live');
    await agent.appendLog(job.id, 'backlog 1\n', 'STDOUT');
    await agent.appendLog(job.id, 'backlog 2\n', 'STDERR');
    const received = collect(user.streamJobLogs(job.id));
    await new Promise((resolve) => setTimeout(resolve, 200));
    for (let i = 0; i < 20; i++) await agent.appendLog(job.id, `live ${i}\n`, i % 5 === 0 ? 'SYSTEM' : 'STDOUT');
    await agent.reportStatus(job.id, { status: 'SUCCESS' });
    const events = await received;
    const chunks = events.filter((e) => e.type === 'log').map((e) => (e.type === 'log' ? e.chunk : null));
    expect(chunks.map((c) => c?.log_chunk)).toEqual([
      'backlog 1\n',
      'backlog 2\n',
      ...Array.from({ length: 20 }, (_, i) => `live ${i}\n`),
    ]);
    expect(chunks[1]?.stream_type).toBe('STDERR');
    expect(chunks[2]?.stream_type).toBe('SYSTEM');
    const statuses = events.filter((e) => e.type === 'status').map((e) => (e.type === 'status' ? e.status : null));
    expect(statuses).toEqual(['PROCESSING', 'SUCCESS']);
    expect(events.at(-1)).toEqual({ type: 'end', status: 'SUCCESS' });
  });

  it('resumes after a dropped connection without gaps or doubles', async () => {
    const { job, agent } = await runningJob('resume');
    for (let i = 0; i < 5; i++) await agent.appendLog(job.id, `part ${i}\n`, 'STDOUT');
    const first = await collect(user.streamJobLogs(job.id), 3);
    const lastSeen = first.filter((e) => e.type === 'log').at(-1);
    const after = lastSeen?.type === 'log' ? lastSeen.chunk.id : 0;
    for (let i = 5; i < 8; i++) await agent.appendLog(job.id, `part ${i}\n`, 'STDOUT');
    await agent.reportStatus(job.id, { status: 'FAILED', error_message: 'boom' });
    const second = await collect(user.streamJobLogs(job.id, { after }));
    const texts = [...first, ...second].flatMap((e) => (e.type === 'log' ? [e.chunk.log_chunk] : []));
    expect(texts).toEqual(Array.from({ length: 8 }, (_, i) => `part ${i}\n`));
    expect(second.at(-1)).toEqual({ type: 'end', status: 'FAILED' });
    expect(second.find((e) => e.type === 'status')).toMatchObject({ status: 'FAILED', error_message: 'boom' });
  });

  it('honours Last-Event-ID like a browser EventSource reconnecting', async () => {
    const { job, agent } = await runningJob('event-id');
    const ids: number[] = [];
    for (let i = 0; i < 4; i++) ids.push((await agent.appendLog(job.id, `e${i}`, 'STDOUT')).id);
    await agent.reportStatus(job.id, { status: 'SUCCESS' });
    const cookie = await server.sessionCookie();
    // The bootstrap admin is a different user: it must not see this job.
    const foreign = await fetch(`${server.url}/api/jobs/${job.id}/logs/stream`, { headers: { cookie } });
    expect(foreign.status).toBe(404);
    const me = await server.accessToken('streamer@example.com');
    const response = await fetch(`${server.url}/api/jobs/${job.id}/logs/stream`, {
      headers: { authorization: `Bearer ${me}`, 'last-event-id': String(ids[1]) },
    });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const text = await response.text();
    expect(text).toContain(`id: ${ids[2]}\nevent: log\n`);
    expect(text).not.toContain(`id: ${ids[1]}\nevent: log\n`);
    expect(text).toMatch(/event: end\n/);
  });
});
