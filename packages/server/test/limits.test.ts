import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { coreServices, InProcessEventBus } from '@trellis/core';
import { ConfigError, createControlPlane, loadConfig, resolve } from '@trellis/server';
import { FakeClock, startServerProcess } from '@trellis/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOOTSTRAP_TOKEN, JWT_SECRET, type RunningControlPlane, startControlPlane } from './support/controlPlane.js';
import { describePostgres } from './support/dialects.js';

/** Waits for a condition the server reaches by itself (never for a span of time). */
async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (condition()) return;
    await new Promise((done) => setTimeout(done, 20));
  }
  throw new Error(`never happened: ${what}`);
}

function bootstrap(url: string, token: string, from?: string): Promise<Response> {
  return fetch(`${url}/auth/bootstrap?token=${encodeURIComponent(token)}`, {
    redirect: 'manual',
    headers: from ? { 'x-forwarded-for': from } : {},
  });
}

function heartbeat(url: string, workerId: string, token: string, from?: string): Promise<Response> {
  return fetch(`${url}/api/workers/heartbeat`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-worker-id': workerId,
      'x-worker-token': token,
      ...(from ? { 'x-forwarded-for': from } : {}),
    },
    body: JSON.stringify({ version: '1.0.0' }),
  });
}

describe('bootstrap token and proxy configuration', () => {
  const BASE = { CLI_JWT_SECRET: JWT_SECRET, TRELLIS_DATA_DIR: '/tmp/trellis-config-test' };

  it('refuses an operator-set bootstrap token shorter than 32 characters', () => {
    expect(() => loadConfig({ ...BASE, TRELLIS_BOOTSTRAP_TOKEN: 'short-but-not-32-chars' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...BASE, TRELLIS_BOOTSTRAP_TOKEN: 'short-but-not-32-chars' })).toThrow(
      /TRELLIS_BOOTSTRAP_TOKEN must be at least 32 characters/,
    );
    expect(loadConfig({ ...BASE, TRELLIS_BOOTSTRAP_TOKEN: 'x'.repeat(32) }).bootstrapToken).toBe('x'.repeat(32));
    // A generated one is long enough, and works once.
    const generated = loadConfig(BASE);
    expect(generated.bootstrapToken?.length).toBeGreaterThanOrEqual(32);
    expect(generated.bootstrapTokenOneTime).toBe(true);
  });

  it('reads TRELLIS_TRUST_PROXY as false, a hop count or addresses, and refuses true and nonsense', () => {
    expect(loadConfig(BASE).trustProxy).toBe(false);
    expect(loadConfig({ ...BASE, TRELLIS_TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ ...BASE, TRELLIS_TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ ...BASE, TRELLIS_TRUST_PROXY: 'loopback, 10.0.0.0/8,fd00::/8' }).trustProxy).toEqual([
      'loopback',
      '10.0.0.0/8',
      'fd00::/8',
    ]);
    expect(() => loadConfig({ ...BASE, TRELLIS_TRUST_PROXY: 'true' })).toThrow(/any client/);
    expect(() => loadConfig({ ...BASE, TRELLIS_TRUST_PROXY: '10.0.0.0/33' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...BASE, TRELLIS_TRUST_PROXY: 'my-proxy' })).toThrow(ConfigError);
  });
});

describe('trellis-server start output', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('never prints an operator-set bootstrap token, and prints a generated one as a one-time link', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'trellis-bin-token-'));
    dirs.push(dataDir);
    const operator = await startServerProcess({ TRELLIS_DATA_DIR: dataDir, TRELLIS_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN });
    try {
      await until(() => operator.output().includes('Sign in as'), 'the sign-in line');
      expect(operator.output()).toContain('/signin with the token set in TRELLIS_BOOTSTRAP_TOKEN');
      expect(operator.output()).not.toContain(BOOTSTRAP_TOKEN);
      expect(operator.output()).not.toContain('token=');
    } finally {
      await operator.stop();
    }
    const generated = await startServerProcess({ TRELLIS_DATA_DIR: dataDir, TRELLIS_BOOTSTRAP_TOKEN: '' });
    try {
      await until(() => generated.output().includes('Sign in as'), 'the sign-in line');
      expect(generated.output()).toMatch(/\(one-time link\): http:\S+\/auth\/bootstrap\?token=[\w-]{32,}/);
    } finally {
      await generated.stop();
    }
  }, 60_000);
});

describe('failure limits on sqlite', () => {
  let server: RunningControlPlane;
  const clock = new FakeClock(new Date());

  beforeAll(async () => {
    server = await startControlPlane('sqlite', {
      clock,
      env: {
        // Loopback (the tests) may forward: each X-Forwarded-For is a client of its own.
        TRELLIS_TRUST_PROXY: 'loopback',
        TRELLIS_BOOTSTRAP_FAILURE_LIMIT: '3',
        TRELLIS_BOOTSTRAP_FAILURE_WINDOW_S: '600',
        TRELLIS_WORKER_AUTH_FAILURE_LIMIT: '5',
        TRELLIS_WORKER_AUTH_FAILURE_WINDOW_S: '60',
      },
    });
  }, 60_000);
  afterAll(() => server?.close());

  it('answers wrong bootstrap tokens with 429 and Retry-After past the limit, per client address', async () => {
    const guesser = '203.0.113.10';
    for (let i = 0; i < 3; i++) expect((await bootstrap(server.url, `wrong-${i}`, guesser)).status).toBe(401);
    const refused = await bootstrap(server.url, 'wrong-again', guesser);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ code: 'rate_limited', status: 429 });
    expect(Number(refused.headers.get('retry-after'))).toBe(600);
    // Even the right token waits out the window from that address; other addresses are not held up.
    expect((await bootstrap(server.url, BOOTSTRAP_TOKEN, guesser)).status).toBe(429);
    // A browser is sent back to the sign-in page, which says why.
    const browser = await fetch(`${server.url}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`, {
      redirect: 'manual',
      headers: { accept: 'text/html', 'x-forwarded-for': guesser },
    });
    expect(browser.status).toBe(303);
    expect(browser.headers.get('location')).toBe('/signin?error=too_many_attempts');
    expect(Number(browser.headers.get('retry-after'))).toBeGreaterThan(0);
    const page = await (await fetch(`${server.url}/signin?error=too_many_attempts`)).text();
    expect(page).toContain('Too many wrong sign-in tokens');
    expect((await bootstrap(server.url, BOOTSTRAP_TOKEN, '203.0.113.11')).status).toBe(303);
    clock.advance({ seconds: 601 });
    expect((await bootstrap(server.url, BOOTSTRAP_TOKEN, guesser)).status).toBe(303);
  });

  it('limits failed worker authentications per address, while a real agent keeps working', async () => {
    const user = await server.userClient('limits@example.com');
    const agent = await server.agentClient(user);
    const attacker = '198.51.100.66';
    for (let i = 0; i < 5; i++) {
      expect((await heartbeat(server.url, crypto.randomUUID(), 'guessed-token', attacker)).status).toBe(401);
    }
    const refused = await heartbeat(server.url, crypto.randomUUID(), 'guessed-token', attacker);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ code: 'rate_limited' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // The agent, from its own address; then, its credentials known, even from the attacker's.
    expect((await heartbeat(server.url, agent.workerId, agent.workerToken, '198.51.100.1')).status).toBe(200);
    expect((await heartbeat(server.url, agent.workerId, agent.workerToken, attacker)).status).toBe(200);
    // A wrong token for the real id from the blocked address is refused before any lookup.
    expect((await heartbeat(server.url, agent.workerId, 'not-its-token', attacker)).status).toBe(429);
  });

  it('drops cached worker credentials when the worker is destroyed', async () => {
    const user = await server.userClient('destroy-cache@example.com');
    const target = await server.agentClient(user, 'target');
    const runner = await server.agentClient(user, 'runner');
    expect((await heartbeat(server.url, target.workerId, target.workerToken, '192.0.2.1')).status).toBe(200);
    const job = await user.createJob({ job_type: 'DESTROY_WORKER', target_worker_id: target.workerId });
    expect((await runner.claimJob())?.job.id).toBe(job.id);
    await runner.reportStatus(job.id, { status: 'SUCCESS' });
    // The fake clock has not moved: only the invalidation can make the cached token fail.
    expect((await heartbeat(server.url, target.workerId, target.workerToken, '192.0.2.1')).status).toBe(401);
  });

  it('refuses a fifth concurrent claim long poll of one worker with 429 too_many_long_polls', async () => {
    const user = await server.userClient('long-polls@example.com');
    const agent = await server.agentClient(user);
    const events = resolve(server.controlPlane.container, coreServices.eventBus) as InProcessEventBus;
    expect(events).toBeInstanceOf(InProcessEventBus);
    const waiting = events.subscriberCount;
    const aborts = new AbortController();
    const claim = (wait: number, signal?: AbortSignal) =>
      fetch(`${server.url}/api/jobs/claim?wait=${wait}`, {
        method: 'POST',
        headers: { 'x-worker-id': agent.workerId, 'x-worker-token': agent.workerToken },
        ...(signal ? { signal } : {}),
      });
    const polls = Array.from({ length: 4 }, () => claim(30, aborts.signal).catch(() => null));
    await until(() => events.subscriberCount === waiting + 4, 'four long polls waiting');
    const fifth = await fetch(`${server.url}/api/jobs/claim?wait=30`, {
      method: 'POST',
      headers: { 'x-worker-id': agent.workerId, 'x-worker-token': agent.workerToken },
    });
    expect(fifth.status).toBe(429);
    expect(await fifth.json()).toMatchObject({ code: 'too_many_long_polls' });
    // A claim without wait is no long poll; another worker has slots of its own.
    expect((await agent.claimJob()) ?? null).toBeNull();
    const other = await server.agentClient(user, 'other');
    const otherPoll = await fetch(`${server.url}/api/jobs/claim?wait=0`, {
      method: 'POST',
      headers: { 'x-worker-id': other.workerId, 'x-worker-token': other.workerToken },
    });
    expect(otherPoll.status).toBe(204);
    // Once the waiting clients go away, their slots are free again.
    aborts.abort();
    await Promise.all(polls);
    await until(() => events.subscriberCount === waiting, 'the long polls ended');
    let status = 429;
    for (let i = 0; i < 50 && status === 429; i++) status = (await claim(1)).status;
    expect(status).toBe(204);
  });
});

describePostgres('limits shared by two control planes on one Postgres', () => {
  let first: RunningControlPlane;
  let second: Awaited<ReturnType<typeof createControlPlane>>;
  let secondUrl: string;
  let dataDir: string;
  const secondClock = new FakeClock(new Date());

  beforeAll(async () => {
    const env = {
      TRELLIS_BOOTSTRAP_FAILURE_LIMIT: '4',
      TRELLIS_BOOTSTRAP_FAILURE_WINDOW_S: '600',
      // Long enough that only the cross-replica invalidation can end a cached entry during a test.
      TRELLIS_WORKER_AUTH_CACHE_S: '60',
      TRELLIS_API_TOKEN_AUTH_CACHE_S: '60',
    };
    first = await startControlPlane('postgres', { env });
    dataDir = mkdtempSync(join(tmpdir(), 'trellis-limits-second-'));
    second = await createControlPlane({
      // Its own fake clock: heartbeats it queues have times that differ from those it wrote.
      clock: secondClock,
      env: {
        PORT: '0',
        TRELLIS_DATA_DIR: dataDir,
        DATABASE_URL: first.database.url,
        CLI_JWT_SECRET: JWT_SECRET,
        TRELLIS_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
        TRELLIS_LOG_LEVEL: 'silent',
        ...env,
        // Its own flushes are rare, so a queued heartbeat is still queued when it shuts down.
        TRELLIS_HEARTBEAT_FLUSH_S: '10',
      },
    });
    secondUrl = (await second.listen()).url;
  }, 60_000);
  afterAll(async () => {
    await second?.close();
    await first?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('counts failures on either replica toward one limit', async () => {
    expect((await bootstrap(first.url, 'wrong-1')).status).toBe(401);
    expect((await bootstrap(secondUrl, 'wrong-2')).status).toBe(401);
    expect((await bootstrap(first.url, 'wrong-3')).status).toBe(401);
    expect((await bootstrap(secondUrl, 'wrong-4')).status).toBe(401);
    // Each replica saw only two: the limit of four holds because the count is in the database.
    const refused = await bootstrap(first.url, 'wrong-5');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).not.toBeNull();
    expect((await bootstrap(secondUrl, BOOTSTRAP_TOKEN)).status).toBe(429);
  });

  it('drops a destroyed worker from the credential cache of the other replica too', async () => {
    // What the second replica hears on the bus, so the test waits for the event, not for time.
    const heard: string[] = [];
    let wake = () => {};
    const stop = resolve(second.container, coreServices.eventBus).subscribe((event) => {
      if (event.type !== 'worker_credentials_changed') return;
      heard.push(event.worker_id);
      wake();
    });
    const changesOf = async (workerId: string, count: number) => {
      while (heard.filter((id) => id === workerId).length < count) await new Promise<void>((done) => (wake = done));
    };
    try {
      const user = await first.userClient('replica-destroy@example.com');
      const target = await first.agentClient(user, 'target');
      const runner = await first.agentClient(user, 'runner');
      // The registration's own announcement first, then cached on the second replica.
      await changesOf(target.workerId, 1);
      expect((await heartbeat(secondUrl, target.workerId, target.workerToken)).status).toBe(200);
      expect(second.useCases.workers.recognize(target.workerId, target.workerToken)).not.toBeNull();
      const job = await user.createJob({ job_type: 'DESTROY_WORKER', target_worker_id: target.workerId });
      expect((await runner.claimJob())?.job.id).toBe(job.id);
      await runner.reportStatus(job.id, { status: 'SUCCESS' });
      expect((await heartbeat(first.url, target.workerId, target.workerToken)).status).toBe(401);
      // The destruction's announcement reaches the second replica; its cache entry had 60 s left.
      await changesOf(target.workerId, 2);
      expect(second.useCases.workers.recognize(target.workerId, target.workerToken)).toBeNull();
      expect((await heartbeat(secondUrl, target.workerId, target.workerToken)).status).toBe(401);
    } finally {
      stop();
    }
  });

  it("drops an API token's cached authentication on the other replica on a membership change and a revocation", async () => {
    // What the second replica hears on the bus, so the test waits for the event, not for time.
    let heard = 0;
    let wake = () => {};
    const stop = resolve(second.container, coreServices.eventBus).subscribe((event) => {
      if (event.type !== 'api_credentials_changed') return;
      heard += 1;
      wake();
    });
    const changes = async (count: number) => {
      while (heard < count) await new Promise<void>((done) => (wake = done));
    };
    const asToken = (token: string, path: string) =>
      fetch(`${secondUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
    try {
      const person = await first.userClient('replica-token@example.com');
      const created = await person.createToken({ name: 'laptop' });
      // Verified once on the second replica, then held there for 60 s.
      expect((await asToken(created.token, '/api/orgs')).status).toBe(200);
      const org = await person.createOrg('replica-token-org');
      // Made on the first replica: the second hears of it and acts with the new membership.
      await changes(1);
      expect((await asToken(created.token, `/api/orgs/${org.id}`)).status).toBe(200);
      await person.revokeToken(created.id);
      expect(
        (await fetch(`${first.url}/api/orgs`, { headers: { authorization: `Bearer ${created.token}` } })).status,
      ).toBe(401);
      await changes(2);
      expect((await asToken(created.token, '/api/orgs')).status).toBe(401);
    } finally {
      stop();
    }
  });

  // Last: it closes the second replica.
  it('writes the heartbeats a replica still holds when it shuts down', async () => {
    const user = await first.userClient('replica-flush@example.com');
    const agent = await first.agentClient(user, 'steady');
    expect((await heartbeat(secondUrl, agent.workerId, agent.workerToken)).status).toBe(200);
    const written = (await user.getWorker(agent.workerId)).last_heartbeat;
    expect(written).toBe(secondClock.now().toISOString());
    secondClock.advance({ seconds: 10 });
    expect((await heartbeat(secondUrl, agent.workerId, agent.workerToken)).status).toBe(200);
    await second.close();
    expect((await user.getWorker(agent.workerId)).last_heartbeat).toBe(secondClock.now().toISOString());
  });
});
