/**
 * A rolling upgrade (docs/operations.md, Upgrades): two real `trellis-server` processes on one
 * Postgres database behind a round-robin TCP balancer, real agents claiming and finishing a
 * steady stream of jobs through it. Server 2 stops, the database gets the next release's
 * (additive) migration, server 2 starts again on it while server 1 keeps serving, then server 1
 * restarts too. No job is lost or run twice, and the agents see nothing but retried requests.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { TrellisClient } from '@trellis/client';
import type { Job } from '@trellis/core';
import { MIGRATIONS, openSqlStore, type TrellisMigration } from '@trellis/store-sql';
import {
  bootstrapSessionCookie,
  checkTestPostgres,
  createTestDatabase,
  describeWithPostgres,
  deviceLoginTokens,
  type ServerProcess,
  startServerProcess,
  type TestDatabase,
  testPostgresPoolSize,
} from '@trellis/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type AgentProcess, eventually, killLeftovers, startAgent, TOFU, vineOf } from '../support/e2e.js';

const BOOTSTRAP_TOKEN = 'rolling-upgrade-bootstrap-token-0123456789';
const JWT_SECRET = 'rolling-upgrade-jwt-secret-at-least-32-bytes';
const AGENTS = 3;
const VINES = 4;
const FINAL = new Set(['SUCCESS', 'FAILED', 'CANCELLED']);

/** The next release's migration: additive (expand), on the table every request touches. */
const NEXT_RELEASE: TrellisMigration = {
  name: '999_test_next_release',
  async up(knex) {
    await knex.schema.alterTable('jobs', (table) => {
      table.text('upgrade_note');
      table.index(['upgrade_note'], 'jobs_upgrade_note_index');
    });
  },
};

/**
 * What a load balancer does, on loopback: each connection goes to the next server in turn; a
 * server that refuses the connection (stopped) is skipped for the next one.
 */
class RoundRobinBalancer {
  private next = 0;
  private readonly sockets = new Set<Socket>();
  private constructor(
    private readonly server: Server,
    private readonly ports: readonly number[],
  ) {}

  static async open(ports: readonly number[]): Promise<RoundRobinBalancer & { url: string }> {
    const server = createServer();
    const balancer = new RoundRobinBalancer(server, ports);
    server.on('connection', (client) => balancer.forward(client, 0));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    return Object.assign(balancer, { url: `http://127.0.0.1:${port}` });
  }

  private forward(client: Socket, attempt: number): void {
    const port = this.ports[this.next++ % this.ports.length] as number;
    const upstream = connect(port, '127.0.0.1');
    this.sockets.add(client).add(upstream);
    upstream.once('error', () => {
      this.sockets.delete(upstream);
      if (upstream.connecting && attempt + 1 < this.ports.length) this.forward(client, attempt + 1);
      else client.destroy();
    });
    upstream.once('connect', () => {
      client.pipe(upstream).pipe(client);
      client.on('error', () => upstream.destroy());
      client.once('close', () => upstream.destroy());
      upstream.once('close', () => client.destroy());
    });
    client.once('close', () => this.sockets.delete(client));
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

const postgres = await checkTestPostgres();

describeWithPostgres('a rolling upgrade under load', postgres, () => {
  let database: TestDatabase;
  let balancer: Awaited<ReturnType<typeof RoundRobinBalancer.open>>;
  const servers: ServerProcess[] = [];
  const agents: AgentProcess[] = [];
  const dirs: string[] = [];
  let env: (name: string) => Record<string, string>;

  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    const artifacts = mkdtempSync(join(tmpdir(), 'trellis-upgrade-artifacts-'));
    dirs.push(artifacts);
    const dataDirs = new Map<string, string>();
    env = (name) => {
      let dataDir = dataDirs.get(name);
      if (dataDir === undefined) {
        dataDir = mkdtempSync(join(tmpdir(), `trellis-upgrade-${name}-`));
        dataDirs.set(name, dataDir);
        dirs.push(dataDir);
      }
      return {
        DATABASE_URL: database.url,
        TRELLIS_DB_POOL_MAX: String(testPostgresPoolSize()),
        TRELLIS_DATA_DIR: dataDir,
        TRELLIS_ARTIFACTS_URL: pathToFileURL(artifacts).href,
        CLI_JWT_SECRET: JWT_SECRET,
        TRELLIS_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
      };
    };
  }, 60_000);

  afterAll(async () => {
    await Promise.all(agents.map((agent) => agent.stop('SIGKILL')));
    killLeftovers();
    await Promise.all(servers.map((server) => server.stop()));
    await balancer?.close();
    await database?.drop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it.skipIf(!TOFU)(
    'loses no job, runs none twice, and the agents only retry',
    async () => {
      // Two replicas on fixed ports behind the balancer; both migrate at start, under the lock.
      const [s1, s2] = await Promise.all([startServerProcess(env('s1')), startServerProcess(env('s2'))]);
      servers.push(s1, s2);
      const ports = [s1.url, s2.url].map((url) => Number(new URL(url).port));
      balancer = await RoundRobinBalancer.open(ports);
      /** SIGTERM, as an orchestrator stops a replica: it finishes in-flight requests and exits 0. */
      const stop = async (running: ServerProcess) => {
        expect(await running.stop()).toBe(0);
        servers.splice(servers.indexOf(running), 1);
      };
      /** The replica on its port again (the balancer knows it by its port). */
      const start = async (name: 's1' | 's2') => {
        const server = await startServerProcess({ ...env(name), PORT: String(ports[name === 's1' ? 0 : 1]) });
        servers.push(server);
        return server;
      };

      const cookie = await bootstrapSessionCookie(s1.url, BOOTSTRAP_TOKEN);
      const { access_token } = await deviceLoginTokens(s1.url, cookie);
      const userOf = (url: string) =>
        new TrellisClient({ baseUrl: url, auth: { kind: 'bearer', accessToken: () => access_token } });
      const user = Object.assign(userOf(balancer.url), { token: access_token, refreshToken: '' });
      const vines = [];
      for (let v = 0; v < VINES; v++)
        vines.push(await vineOf({ user }, `upgrade-${v}`, 'outputs', { cluster: `c${v}` }));
      for (let a = 0; a < AGENTS; a++)
        agents.push(await startAgent({ url: balancer.url, user }, { name: `agent-${a}` }));

      // The steady stream: a job a second. The test queues and reads through a replica it
      // knows is up, not the balancer: its own requests are not retried, and they are not what
      // is tested.
      const created: string[] = [];
      let via = userOf(s1.url);
      let feeding = true;
      const feeder = (async () => {
        for (let n = 0; feeding; n++) {
          const vine = vines[n % VINES] as { id: string };
          created.push((await via.createJob({ job_type: 'PLAN', configuration_id: vine.id })).id);
          await new Promise((resolve) => setTimeout(resolve, 1000));
        }
      })();
      feeder.catch(() => undefined); // awaited below; a failed test must not leave it unhandled
      const finished = async () => {
        const jobs: Job[] = [];
        for (const id of [...created]) jobs.push(await via.getJob(id));
        return jobs.filter((job) => FINAL.has(job.status)).length;
      };
      /** Waits until `more` further jobs have reached a final status. */
      const progress = async (what: string, more: number) => {
        const target = (await finished()) + more;
        await eventually(what, async () => ((await finished()) >= target ? true : undefined), 120_000);
      };

      try {
        await progress('jobs finishing on two replicas', 4);

        // Server 2 stops; the next release migrates the database while server 1 serves alone.
        await stop(s2);
        const nextRelease = await openSqlStore(database.url, { migrations: [...MIGRATIONS, NEXT_RELEASE] });
        try {
          await nextRelease.migrate();
        } finally {
          await nextRelease.close();
        }
        await progress('jobs finishing on server 1 alone, on the migrated schema', 3);
        const s2Upgraded = await start('s2');
        expect(s2Upgraded.output()).toContain('newer than this release (999_test_next_release)');
        await progress('jobs finishing after server 2 came back', 3);

        // Server 1 restarts too, while server 2 serves.
        via = userOf(s2Upgraded.url);
        await stop(s1);
        await progress('jobs finishing on server 2 alone', 3);
        const s1Upgraded = await start('s1');
        via = userOf(s1Upgraded.url);
        await progress('jobs finishing on both upgraded replicas', 4);
      } finally {
        feeding = false;
      }
      await feeder;
      const jobs = await eventually(
        'every job to reach a final status',
        async () => {
          const all: Job[] = [];
          for (const id of created) all.push(await via.getJob(id));
          return all.every((job) => FINAL.has(job.status)) ? all : undefined;
        },
        180_000,
      );
      await Promise.all(agents.map((agent) => agent.stop('SIGTERM')));

      expect(jobs.map((job) => job.status)).toEqual(jobs.map(() => 'SUCCESS'));
      // Each job claimed and finished exactly once, by the agent the control plane says ran it.
      const lines = agents.flatMap((agent) =>
        agent
          .output()
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => ({ agent, entry: JSON.parse(line) as Record<string, unknown> })),
      );
      for (const job of jobs) {
        const started = lines.filter(({ entry }) => entry.msg === 'job started' && entry.job_id === job.id);
        const ended = lines.filter(({ entry }) => entry.msg === 'job ended' && entry.job_id === job.id);
        expect(
          started.map(({ agent }) => agent.workerId),
          `job ${job.id} started`,
        ).toEqual([job.claimed_by_worker_id]);
        expect(
          ended.map(({ entry }) => entry.status),
          `job ${job.id} ended`,
        ).toEqual(['SUCCESS']);
      }
      // A retried log post lands once (the shipper checks what landed first): each plan appears once.
      for (const job of jobs) {
        let text = '';
        for (let after = 0; ; ) {
          const page = await via.getJobLogs(job.id, { after, limit: 5000 });
          text += page.logs.map((chunk) => chunk.log_chunk).join('');
          after = page.logs.at(-1)?.id ?? after;
          if (!page.has_more) break;
        }
        expect(text.split('Plan: 1 to add, 0 to change, 0 to destroy.').length - 1, `the log of job ${job.id}`).toBe(1);
      }
      // Nothing but retried requests: warnings are retries of failed connections, no errors.
      const complaints = lines
        .map(({ entry }) => entry)
        .filter((entry) => entry.level === 'error' || entry.level === 'warn');
      expect(complaints.filter((entry) => entry.level === 'error')).toEqual([]);
      for (const entry of complaints) {
        expect(entry.msg).toMatch(/retrying|^heartbeat failed$/);
        expect(entry.error).toMatch(/cannot reach the Trellis control plane/);
      }
    },
    600_000,
  );
});
