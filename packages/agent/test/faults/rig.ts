/**
 * The rig every fault scenario (issue 30, docs/reliability.md) runs on: a dedicated Postgres, a
 * real `trellis-server` on it, Toxiproxy between the agents and the server (the agents and their
 * engines reach the control plane only through `proxy`), real agents and OpenTofu running the
 * ledger configuration, and the invariant checker over all of it at the end.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { TrellisClient } from '@trellis/client';
import {
  checkInvariants,
  connectPostgres,
  type DedicatedPostgres,
  describeViolations,
  LEDGER_CONFIGURATION,
  loadFaultRecords,
  type ToxicProxy,
  requirePeer,
  type ServerProcess,
  startDedicatedPostgres,
  startServerProcess,
  startToxiproxy,
  type Toxiproxy,
  type Violation,
  vineyardWithVine,
} from '@trellis/testkit';
import {
  type AgentProcess,
  BOOTSTRAP_TOKEN,
  type E2eServer,
  JWT_SECRET,
  killLeftovers,
  RELEASE_SECRET,
  startAgent,
  startServer,
} from '../support/e2e.js';

export const TOXIPROXY = requirePeer('toxiproxy-server', 'the fault scenarios');

/** A second replica of the control plane on the same database and artifact store. */
export interface Replica {
  url: string;
  /** The test's user, signed in through this replica. */
  user: E2eServer['user'];
  process: ServerProcess;
  /** Stops the process with `signal` (`SIGTERM`: a clean stop; `SIGKILL`: it dies mid-request) and starts it again on the same port. */
  restart(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
}

export interface RigAgentOptions {
  /** The agent's environment on top of the rig's (e.g. `TRELLIS_ENGINE_BIN`, `TRELLIS_AGENT_CONCURRENCY`). */
  env?: Record<string, string>;
  /** Another proxy of the rig (`createProxy`) instead of `proxy`. */
  via?: ToxicProxy;
  /** The agent's work dir (default: one of its own in a temp dir), e.g. on a small tmpfs. */
  workDir?: string;
  /** More `trellis-agent run` flags. */
  args?: string[];
}

export interface FaultRig {
  server: E2eServer;
  /** With `replicas: 2`: the other replica. */
  second: Replica | null;
  postgres: DedicatedPostgres;
  /** Between the agents (and their engines) and the server. */
  proxy: ToxicProxy;
  agents: AgentProcess[];
  /** The rig's temp dir (removed by `stop`). */
  dir: string;
  /** Where every replica keeps plan files and state versions (`FsArtifactStore`: partial uploads in `tmp/`). */
  artifactsDir: string;
  /** An agent that reaches the control plane through the proxy (or `options.via`). */
  startAgent(name: string, options?: RigAgentOptions): Promise<AgentProcess>;
  /** Another Toxiproxy proxy, to `upstream` (`host:port`), e.g. a second balancer in front of the replicas. */
  createProxy(name: string, upstream: string): Promise<ToxicProxy>;
  /**
   * A vine running the ledger configuration, its ledger in the rig's temp dir; `files` are more
   * files of its configuration beside it.
   */
  ledgerVine(
    name: string,
    variables?: Record<string, string>,
    files?: Record<string, string>,
  ): Promise<{ id: string; name: string; ledger: string }>;
  /**
   * A vine running `mainTf`, which declares `variable "ledger"` and keeps the ledger there as
   * `LEDGER_CONFIGURATION` does (the checker reads it); the ledger is in the rig's temp dir.
   */
  vine(
    name: string,
    mainTf: string,
    variables?: Record<string, string>,
    files?: Record<string, string>,
  ): Promise<{ id: string; name: string; ledger: string }>;
  /** Stops the agents, then runs the invariant checker over everything recorded (read through `through`'s API). */
  check(through?: Pick<E2eServer, 'user'>): Promise<Violation[]>;
  stop(): Promise<void>;
}

/**
 * Starts the rig; `settings` are the server's (e.g. a short lost-job timeout). `artifactsDir`
 * puts the filesystem artifact store there (a small tmpfs, for the disk-full scenario) instead of
 * in the rig's temp dir.
 */
export async function startFaultRig(
  settings: Record<string, string>,
  options: { replicas?: 1 | 2; artifactsDir?: string } = {},
): Promise<FaultRig> {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-faults-'));
  const artifactsDir = options.artifactsDir ?? join(dir, 'artifacts');
  const postgres = await startDedicatedPostgres();
  let toxiproxy: Toxiproxy | undefined;
  let server: E2eServer | undefined;
  let second: Replica | null = null;
  try {
    const shared = {
      DATABASE_URL: postgres.url,
      TRELLIS_DB_POOL_MAX: '4',
      TRELLIS_NOTIFICATIONS_ALLOW_PRIVATE_URLS: 'true',
      // Plan files and state versions where every replica finds them.
      TRELLIS_ARTIFACTS_URL: pathToFileURL(artifactsDir).href,
      ...settings,
    };
    server = await startServer(shared);
    if (options.replicas === 2) {
      const dataDir = join(dir, 'replica-2');
      mkdirSync(dataDir);
      const env = {
        ...shared,
        TRELLIS_DATA_DIR: dataDir,
        CLI_JWT_SECRET: JWT_SECRET,
        TRELLIS_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
        RELEASE_API_SECRET: RELEASE_SECRET,
      };
      const process = await startServerProcess(env);
      const token = server.user.token;
      const user = Object.assign(
        new TrellisClient({ baseUrl: process.url, auth: { kind: 'bearer', accessToken: () => token } }),
        { token, refreshToken: server.user.refreshToken },
      );
      const replica: Replica = {
        url: process.url,
        user,
        process,
        async restart(signal = 'SIGTERM') {
          await replica.process.stop(signal);
          replica.process = await startServerProcess({ ...env, PORT: new URL(replica.url).port });
        },
      };
      second = replica;
    }
    toxiproxy = await startToxiproxy(TOXIPROXY as string);
    const proxy = await toxiproxy.createProxy('agents', new URL(server.url).host);
    // Every job's end is announced through the outbox: the checker counts the announcements.
    await server.user.createNotification({
      name: 'every-end',
      kind: 'webhook',
      url: 'http://127.0.0.1:9/nowhere',
      events: ['job.succeeded', 'job.failed', 'job.cancelled'],
    });
    const ledgers: Record<string, string> = {};
    const agents: AgentProcess[] = [];
    const started = { server, toxiproxy };
    const vine = async (
      name: string,
      mainTf: string,
      variables: Record<string, string> = {},
      files: Record<string, string> = {},
    ) => {
      const ledger = join(dir, `${name}.ledger`);
      const { vine } = await vineyardWithVine(started.server.user, name, {
        source: { type: 'inline', files: { 'main.tf': mainTf, ...files } },
        variables: { ledger, ...variables },
        engine: 'tofu',
      });
      ledgers[vine.id] = ledger;
      return { id: vine.id, name: vine.name, ledger };
    };
    return {
      server,
      second,
      postgres,
      proxy,
      agents,
      dir,
      artifactsDir,
      async startAgent(name, agentOptions = {}) {
        const agent = await startAgent(
          { url: (agentOptions.via ?? proxy).url, user: started.server.user },
          {
            name,
            ...(agentOptions.env ? { env: agentOptions.env } : {}),
            ...(agentOptions.workDir ? { workDir: agentOptions.workDir } : {}),
            ...(agentOptions.args ? { args: agentOptions.args } : {}),
          },
        );
        agents.push(agent);
        return agent;
      },
      createProxy: (name, upstream) => started.toxiproxy.createProxy(name, upstream),
      ledgerVine: (name, variables = {}, files = {}) => vine(name, LEDGER_CONFIGURATION, variables, files),
      vine,
      async check(through = started.server) {
        await Promise.all(agents.map((agent) => agent.stop()));
        const db = await connectPostgres(postgres.url);
        try {
          const records = await loadFaultRecords({
            db,
            stateText: async (vineId, versionId) =>
              new Response(await through.user.downloadStateVersion(vineId, versionId)).text(),
            ledgerFiles: ledgers,
            agentLogs: agents.map((agent) => agent.output()),
            serverLogs: [started.server.output(), ...(second ? [second.process.output()] : [])],
            artifactsDir,
          });
          if (process.env.TRELLIS_FAULTS_DEBUG) {
            console.log(JSON.stringify({ ...records, agentLogs: [] }, null, 1));
            for (const agent of agents) console.log(agent.output());
          }
          return checkInvariants(records, { announcedEnds: true });
        } finally {
          await db.end();
        }
      },
      async stop() {
        if (process.env.TRELLIS_FAULTS_DEBUG) for (const agent of agents) console.log(agent.output());
        for (const agent of agents) agent.child.kill('SIGCONT');
        await Promise.all(agents.map((agent) => agent.stop('SIGKILL')));
        killLeftovers();
        await second?.process.stop('SIGKILL');
        await started.server.stop();
        await started.toxiproxy.stop();
        await postgres.destroy();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await second?.process.stop('SIGKILL');
    await server?.stop();
    await toxiproxy?.stop();
    await postgres.destroy();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** The checker's findings as a failure message (empty when there are none). */
export function violationsOf(violations: Violation[]): string {
  return describeViolations(violations);
}

/**
 * An `http` state backend that answers a read only when the scenario says so: a configuration
 * whose `slow_state_url` points here has its plan held open (the engine waits for this state)
 * without any sleep in the plan.
 */
export interface HeldState {
  url: string;
  /** Resolves when the engine asked (the plan is in progress). */
  asked: Promise<void>;
  /** Answers every held read (and every later one at once). */
  release(): void;
  close(): Promise<void>;
}

const EMPTY_STATE = JSON.stringify({
  version: 4,
  terraform_version: '1.12.6',
  serial: 1,
  lineage: 'held-state',
  outputs: {},
  resources: [],
});

export async function heldState(): Promise<HeldState> {
  let released = false;
  const held: ServerResponse[] = [];
  let asked: () => void = () => {};
  const askedPromise = new Promise<void>((resolve) => {
    asked = resolve;
  });
  const server: Server = createServer((_request: IncomingMessage, response: ServerResponse) => {
    asked();
    if (released) response.end(EMPTY_STATE);
    else held.push(response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/state`,
    asked: askedPromise,
    release() {
      released = true;
      for (const response of held.splice(0)) response.end(EMPTY_STATE);
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
