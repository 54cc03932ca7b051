import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { TrellisClient } from '@trellis/client';
import {
  bootstrapSessionCookie,
  createTestDatabase,
  type ServerProcess,
  startServerProcess,
  type TestDatabase,
  testPostgresPoolSize,
} from '@trellis/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BOOTSTRAP_TOKEN, INLINE_MAIN_TF, JWT_SECRET } from './support/controlPlane.js';
import { describePostgres } from './support/dialects.js';

/** Signs in on `url` through the bootstrap link and the device login, as the CLI would. */
async function login(url: string): Promise<TrellisClient & { token: string }> {
  const bootstrap = await fetch(`${url}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`, { redirect: 'manual' });
  const cookie = (bootstrap.headers.get('set-cookie') ?? '').split(';')[0] as string;
  const web = new TrellisClient({ baseUrl: url, auth: { kind: 'cookie', cookie, origin: new URL(url).origin } });
  const deviceCode = crypto.randomUUID();
  const { verification_code } = await web.generateCliLogin(deviceCode);
  const { access_token } = await web.exchangeCliLogin({ device_code: deviceCode, verification_code });
  const client = new TrellisClient({ baseUrl: url, auth: { kind: 'bearer', accessToken: () => access_token } });
  return Object.assign(client, { token: access_token });
}

describePostgres('two trellis-server processes on one Postgres', () => {
  let database: TestDatabase;
  const dirs: string[] = [];
  let a: ServerProcess;
  let b: ServerProcess;

  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    const artifacts = mkdtempSync(join(tmpdir(), 'trellis-replicas-artifacts-'));
    dirs.push(artifacts);
    const env = (name: string) => {
      const dataDir = mkdtempSync(join(tmpdir(), `trellis-replica-${name}-`));
      dirs.push(dataDir);
      return {
        DATABASE_URL: database.url,
        TRELLIS_DB_POOL_MAX: String(testPostgresPoolSize()),
        TRELLIS_DATA_DIR: dataDir,
        TRELLIS_ARTIFACTS_URL: pathToFileURL(artifacts).href,
        CLI_JWT_SECRET: JWT_SECRET,
        TRELLIS_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
      };
    };
    // Started together: both apply migrations at once, under the migration lock.
    [a, b] = await Promise.all([startServerProcess(env('a')), startServerProcess(env('b'))]);
  }, 90_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await database?.drop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('never hands the same job to agents claiming through different replicas', async () => {
    const userA = await login(a.url);
    const userB = new TrellisClient({
      baseUrl: b.url,
      auth: { kind: 'bearer', accessToken: () => userA.token },
    });
    const vineyard = await userA.createVineyard('replicas');
    const jobIds: string[] = [];
    for (let v = 0; v < 10; v++) {
      const vine = await userA.createConfiguration({
        name: `vine-${v}`,
        vineyard_id: vineyard.id,
        source: { type: 'inline', files: { 'main.tf': INLINE_MAIN_TF } },
      });
      for (let j = 0; j < 6; j++)
        jobIds.push((await userA.createJob({ job_type: 'PLAN', configuration_id: vine.id })).id);
    }
    const agents = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const owner = i % 2 === 0 ? userA : userB;
        const { worker_id, worker_token } = await owner.registerAgent({ name: `agent-${i}` });
        return new TrellisClient({
          baseUrl: i % 2 === 0 ? a.url : b.url,
          auth: { kind: 'worker', workerId: worker_id, workerToken: worker_token },
        });
      }),
    );
    const claimed: string[] = [];
    await Promise.all(
      agents.map(async (agent) => {
        for (;;) {
          const next = await agent.claimJob();
          if (!next) return;
          claimed.push(next.job.id);
          await agent.reportStatus(next.job.id, { status: 'SUCCESS' });
        }
      }),
    );
    expect(claimed.length).toBe(jobIds.length);
    expect(new Set(claimed).size).toBe(jobIds.length);
    expect(new Set(claimed)).toEqual(new Set(jobIds));
  });

  it('delivers a chunk posted to one replica on a stream served by the other, and wakes long polls there', async () => {
    const userA = await login(a.url);
    const userB = new TrellisClient({ baseUrl: b.url, auth: { kind: 'bearer', accessToken: () => userA.token } });
    const vineyard = await userA.createVineyard('realtime');
    const vine = await userA.createConfiguration({
      name: 'realtime',
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': INLINE_MAIN_TF } },
    });
    const registration = await userA.registerAgent({ name: 'rt-agent' });
    const agentOnB = new TrellisClient({
      baseUrl: b.url,
      auth: { kind: 'worker', workerId: registration.worker_id, workerToken: registration.worker_token },
    });
    const agentOnA = new TrellisClient({
      baseUrl: a.url,
      auth: { kind: 'worker', workerId: registration.worker_id, workerToken: registration.worker_token },
    });

    // A long poll held by B wakes up for a job queued through A.
    const claim = agentOnB.claimJob({ wait: 25 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const job = await userA.createJob({ job_type: 'PLAN', configuration_id: vine.id });
    expect((await claim)?.job.id).toBe(job.id);

    // A stream served by B receives a chunk posted through A.
    const events = userB.streamJobLogs(job.id);
    const first = events.next(); // the stream opens and sends the PROCESSING status
    expect((await first).value).toMatchObject({ type: 'status', status: 'PROCESSING' });
    const next = events.next();
    await agentOnA.appendLog(job.id, 'hello from replica A\n', 'STDOUT');
    const received = await next;
    expect(received.value).toMatchObject({ type: 'log', chunk: { log_chunk: 'hello from replica A\n' } });
    await agentOnA.reportStatus(job.id, { status: 'SUCCESS' });
    const rest: unknown[] = [];
    for await (const event of events) rest.push(event);
    expect(rest.at(-1)).toEqual({ type: 'end', status: 'SUCCESS' });
  });

  it("sends a job queued through one replica as a row of a web list's stream served by the other", async () => {
    const userA = await login(a.url);
    const vineyard = await userA.createVineyard('live-rows');
    const vine = await userA.createConfiguration({
      name: 'live-rows',
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': INLINE_MAIN_TF } },
    });
    const cookie = await bootstrapSessionCookie(b.url, BOOTSTRAP_TOKEN);
    const controller = new AbortController();
    const response = await fetch(`${b.url}/live/jobs?view=vine&vine_id=${vine.id}`, {
      headers: { cookie },
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = '';
    const readUntil = async (wanted: string) => {
      while (!text.includes(wanted)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the stream ended before ${JSON.stringify(wanted)}: ${text}`);
        text += decoder.decode(value, { stream: true });
      }
    };
    await readUntil('event: rows');
    const job = await userA.createJob({ job_type: 'PLAN', configuration_id: vine.id });
    await readUntil(`data-job-row="${job.id}"`);
    expect(text.slice(text.indexOf(`data-job-row="${job.id}"`))).toContain('data-status="QUEUED"');
    // Claimed and ended through A: the row changes on B's stream.
    const registration = await userA.registerAgent({ name: 'rows-agent' });
    const agentOnA = new TrellisClient({
      baseUrl: a.url,
      auth: { kind: 'worker', workerId: registration.worker_id, workerToken: registration.worker_token },
    });
    expect((await agentOnA.claimJob())?.job.id).toBe(job.id);
    await agentOnA.reportStatus(job.id, { status: 'SUCCESS' });
    await readUntil('data-status="SUCCESS"');
    controller.abort();
  });

  it('shuts down on SIGTERM: in-flight long polls end, the process exits 0', async () => {
    const user = await login(a.url);
    const { worker_id, worker_token } = await user.registerAgent({ name: 'shutdown-agent' });
    const agent = new TrellisClient({
      baseUrl: a.url,
      auth: { kind: 'worker', workerId: worker_id, workerToken: worker_token },
    });
    const claim = agent.claimJob({ wait: 30 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = Date.now();
    const code = await a.stop('SIGTERM');
    expect(await claim).toBeNull();
    expect(code).toBe(0);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(a.output()).toMatch(/shutting down/);
  });
});
