/**
 * Notifications end to end (issue 14): the real `trellis-server` binary, a real agent's status
 * reports over HTTP, and a real HTTP receiver on loopback that checks every signature.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { TrellisApiError, TrellisClient } from '@trellis/client';
import {
  createTestDatabase,
  type ServerProcess,
  startServerProcess,
  type TestDatabase,
  testPostgresPoolSize,
} from '@trellis/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { BOOTSTRAP_TOKEN, INLINE_MAIN_TF, JWT_SECRET } from './support/controlPlane.js';
import { describePostgres } from './support/dialects.js';

interface Received {
  delivery: string;
  event: string;
  body: Record<string, unknown>;
  signatureValid: boolean;
  answered: number;
}

/** A webhook receiver on loopback: answers 503 to the first `failFirst` requests, then 200. */
async function startReceiver(secret: () => string, failFirst = 0) {
  const received: Received[] = [];
  let seen = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const expected = `sha256=${createHmac('sha256', secret()).update(raw).digest('hex')}`;
      const given = String(req.headers['x-trellis-signature'] ?? '');
      const signatureValid =
        given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected));
      seen += 1;
      const answered = seen <= failFirst ? 503 : signatureValid ? 200 : 401;
      received.push({
        delivery: String(req.headers['x-trellis-delivery']),
        event: String(req.headers['x-trellis-event']),
        body: JSON.parse(raw.toString('utf8')) as Record<string, unknown>,
        signatureValid,
        answered,
      });
      res.writeHead(answered).end(answered === 200 ? 'thanks' : 'not now');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

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

/** Waits for `condition` (polling, no fixed sleep), failing after `timeoutMs`. */
async function waitFor<T>(what: string, probe: () => T | Promise<T>, timeoutMs = 30_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Runs `count` PLAN jobs on a new vine of `user` to SUCCESS with a registered agent; returns their ids. */
async function succeedJobs(user: TrellisClient, url: string, count: number): Promise<string[]> {
  const vineyard = await user.createVineyard(`vy-${crypto.randomUUID().slice(0, 8)}`);
  const vine = await user.createConfiguration({
    name: `vine-${crypto.randomUUID().slice(0, 8)}`,
    vineyard_id: vineyard.id,
    source: { type: 'inline', files: { 'main.tf': INLINE_MAIN_TF } },
  });
  const { worker_id, worker_token } = await user.registerAgent({ name: `agent-${crypto.randomUUID().slice(0, 8)}` });
  const agent = new TrellisClient({
    baseUrl: url,
    auth: { kind: 'worker', workerId: worker_id, workerToken: worker_token },
  });
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const job = await user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
    const claimed = await agent.claimJob();
    expect(claimed?.job.id).toBe(job.id);
    await agent.reportStatus(job.id, { status: 'SUCCESS' });
    ids.push(job.id);
  }
  return ids;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function sqliteEnv(extra: Record<string, string> = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'trellis-notify-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  return {
    TRELLIS_DATA_DIR: dataDir,
    CLI_JWT_SECRET: JWT_SECRET,
    TRELLIS_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
    TRELLIS_OUTBOX_RETRY_BASE_S: '1',
    ...extra,
  };
}

async function start(env: Record<string, string>): Promise<ServerProcess> {
  const server = await startServerProcess(env);
  cleanups.push(async () => {
    await server.stop();
  });
  return server;
}

describe('notifications from a trellis-server process', () => {
  it('deliver a signed webhook, retried after 503s under one delivery id, every attempt recorded', async () => {
    let secret = '';
    const receiver = await startReceiver(() => secret, 2);
    cleanups.push(receiver.close);
    const server = await start(
      sqliteEnv({ TRELLIS_NOTIFICATIONS_ALLOW_PRIVATE_URLS: 'true', TRELLIS_OUTBOX_INTERVAL_S: '1' }),
    );
    const user = await login(server.url);
    const created = await user.createNotification({
      name: 'ops',
      kind: 'webhook',
      url: receiver.url,
      events: ['job.succeeded'],
    });
    secret = created.secret as string;
    const [jobId] = await succeedJobs(user, server.url, 1);

    await waitFor('a delivered webhook', () => receiver.received.some((r) => r.answered === 200));
    expect(receiver.received.map((r) => r.answered)).toEqual([503, 503, 200]);
    expect(receiver.received.every((r) => r.signatureValid)).toBe(true);
    expect(new Set(receiver.received.map((r) => r.delivery)).size).toBe(1);
    const body = receiver.received[2]?.body as { event: string; job: { id: string }; url: string };
    expect(body.event).toBe('job.succeeded');
    expect(body.job.id).toBe(jobId);
    expect(body.url).toBe(`${server.url.replace('127.0.0.1', 'localhost')}/jobs/${jobId}`);

    const page = await waitFor('the delivered status', async () => {
      const current = await user.listDeliveriesPage(created.id);
      return current.items[0]?.status === 'delivered' ? current : null;
    });
    expect(page.items).toHaveLength(1);
    expect(page.items[0]?.id).toBe(receiver.received[0]?.delivery);
    expect(page.items[0]?.attempts.map((a) => a.status_code)).toEqual([503, 503, 200]);
    expect(page.items[0]?.attempts[2]?.response_excerpt).toBe('thanks');

    const test = await user.testNotification(created.id);
    expect(test.status).toBe('delivered');
    expect(test.event).toBe('notification.test');
  }, 60_000);

  it('still deliver after the server is killed between the change and the delivery', async () => {
    let secret = '';
    const receiver = await startReceiver(() => secret);
    cleanups.push(receiver.close);
    // The first server never gets to deliver: its delivery round is an hour away.
    const env = sqliteEnv({ TRELLIS_NOTIFICATIONS_ALLOW_PRIVATE_URLS: 'true' });
    const first = await start({ ...env, TRELLIS_OUTBOX_INTERVAL_S: '3600' });
    const user = await login(first.url);
    const created = await user.createNotification({
      name: 'ops',
      kind: 'webhook',
      url: receiver.url,
      events: ['job.succeeded'],
    });
    secret = created.secret as string;
    const [jobId] = await succeedJobs(user, first.url, 1);
    const pending = await user.listDeliveriesPage(created.id);
    expect(pending.items.map((d) => d.status)).toEqual(['pending']);
    await first.stop('SIGKILL');
    expect(receiver.received).toHaveLength(0);

    const second = await start({ ...env, TRELLIS_OUTBOX_INTERVAL_S: '1' });
    await waitFor('the delivery after the restart', () => receiver.received.length > 0);
    expect(receiver.received[0]?.delivery).toBe(pending.items[0]?.id);
    expect(receiver.received[0]?.signatureValid).toBe(true);
    expect((receiver.received[0]?.body.job as { id: string } | undefined)?.id).toBe(jobId);
    expect(second.url).toBeTruthy();
  }, 60_000);

  it('refuse private and loopback receivers unless TRELLIS_NOTIFICATIONS_ALLOW_PRIVATE_URLS=true', async () => {
    const server = await start(sqliteEnv());
    const user = await login(server.url);
    for (const url of [
      'https://127.0.0.1/hook',
      'https://localhost/hook',
      'http://example.com/hook',
      'https://[::1]/x',
    ]) {
      const error = await user.createNotification({ name: 'x', kind: 'webhook', url, events: ['job.failed'] }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error, url).toBeInstanceOf(TrellisApiError);
      expect((error as TrellisApiError).status).toBe(400);
      expect((error as TrellisApiError).code).toBe('notification_url_refused');
    }
  }, 60_000);
});

describePostgres('notifications from two trellis-server processes on one Postgres', () => {
  let database: TestDatabase;
  afterEach(async () => {
    await database?.drop();
  });

  it('deliver each event once, whichever replica takes it (FOR UPDATE SKIP LOCKED)', async () => {
    database = await createTestDatabase('postgres');
    let secret = '';
    const receiver = await startReceiver(() => secret);
    cleanups.push(receiver.close);
    const artifacts = mkdtempSync(join(tmpdir(), 'trellis-notify-artifacts-'));
    cleanups.push(() => rmSync(artifacts, { recursive: true, force: true }));
    const env = (name: string) => {
      const dataDir = mkdtempSync(join(tmpdir(), `trellis-notify-${name}-`));
      cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
      return {
        DATABASE_URL: database.url,
        TRELLIS_DB_POOL_MAX: String(testPostgresPoolSize()),
        TRELLIS_DATA_DIR: dataDir,
        TRELLIS_ARTIFACTS_URL: pathToFileURL(artifacts).href,
        CLI_JWT_SECRET: JWT_SECRET,
        TRELLIS_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
        TRELLIS_NOTIFICATIONS_ALLOW_PRIVATE_URLS: 'true',
        // The first replica starts idle, so both are running when the deliveries fall due.
        TRELLIS_OUTBOX_INTERVAL_S: '1',
      };
    };
    const [a, b] = await Promise.all([start(env('a')), start(env('b'))]);
    const user = await login(a.url);
    const created = await user.createNotification({
      name: 'ops',
      kind: 'webhook',
      url: receiver.url,
      events: ['job.succeeded'],
    });
    secret = created.secret as string;
    const jobs = await succeedJobs(user, a.url, 12);
    const deliveries = await waitFor('every delivery delivered', async () => {
      const page = await user.listDeliveriesPage(created.id, { limit: 50 });
      return page.items.length === jobs.length && page.items.every((d) => d.status === 'delivered') ? page.items : null;
    });
    // Delivered is final: nothing can send them again, so these counts are the last word.
    expect(deliveries.every((d) => d.attempts.length === 1)).toBe(true);
    expect(receiver.received).toHaveLength(jobs.length);
    expect(new Set(receiver.received.map((r) => r.delivery)).size).toBe(jobs.length);
    expect(new Set(receiver.received.map((r) => (r.body.job as { id: string }).id))).toEqual(new Set(jobs));
    expect(b.url).toBeTruthy();
  }, 90_000);
});
