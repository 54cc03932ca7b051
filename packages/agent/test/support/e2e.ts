import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TrellisClient } from '@trellis/client';
import type { Job, JobStatus, LogChunk } from '@trellis/core';
import {
  type AgentProcess,
  bootstrapSessionCookie,
  caFetch,
  deviceLoginTokens,
  makeTestCa,
  requirePeer,
  type ServerProcess,
  startAgentProcess,
  startServerProcess,
  type TestCa,
  vineyardWithVine,
} from '@trellis/testkit';

export { AGENT_BIN } from '@trellis/testkit';
export const FIXTURES = fileURLToPath(new URL('../../../../test-fixtures/opentofu/', import.meta.url));
export const BOOTSTRAP_TOKEN = 'agent-e2e-bootstrap-token-0123456789';
export const RELEASE_SECRET = 'agent-e2e-release-secret';
export const JWT_SECRET = 'agent-e2e-jwt-secret-at-least-32-bytes!!';

/** The pinned OpenTofu of scripts/peers.sh: null (and a loud note) on a laptop without it, an error in CI. */
export const TOFU = requirePeer('tofu', 'trellis-agent end-to-end tests');

/** Inline source of a configuration in test-fixtures/opentofu/. */
export function fixture(name: string): { type: 'inline'; files: Record<string, string> } {
  return { type: 'inline', files: { 'main.tf': readFileSync(join(FIXTURES, name, 'main.tf'), 'utf8') } };
}

export interface E2eServer {
  url: string;
  user: TrellisClient & { token: string; refreshToken: string };
  dataDir: string;
  output(): string;
  /** Stops the process (SIGTERM), keeps it down for `downMs`, and starts it again on the same port and data. */
  restart(downMs?: number): Promise<void>;
  /** `SIGKILL`: the process dies mid-request (its data dir stays). */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

/** The real `trellis-server` binary on SQLite in a temp dir, with a signed-in user. */
export async function startServer(env: Record<string, string> = {}): Promise<E2eServer> {
  return startServerAt(env, (process) => process.url, fetch);
}

/** A server over TLS with its throw-away CA: `host` is `<hostname>:<port>`, the name `tofu` and the registry use. */
export interface TlsE2eServer extends E2eServer {
  ca: TestCa;
  host: string;
}

/**
 * `startServer` over TLS, with a certificate of a throw-away CA, reached as
 * `https://<hostname>:<port>` (a registry host needs a dot: pass `127.0.0.1`). The user's client
 * trusts the CA; give `ca.caFile` to an agent (`NODE_EXTRA_CA_CERTS`) and `tofu` (`SSL_CERT_FILE`).
 */
export async function startTlsServer(env: Record<string, string> = {}, hostname = 'localhost'): Promise<TlsE2eServer> {
  const ca = makeTestCa();
  try {
    const server = await startServerAt(
      { TRELLIS_TLS_CERT_FILE: ca.certFile, TRELLIS_TLS_KEY_FILE: ca.keyFile, ...env },
      (process) => `https://${hostname}:${new URL(process.url).port}`,
      caFetch(ca),
    );
    return {
      ...server,
      ca,
      host: new URL(server.url).host,
      async stop() {
        await server.stop();
        rmSync(ca.dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(ca.dir, { recursive: true, force: true });
    throw error;
  }
}

async function startServerAt(
  env: Record<string, string>,
  urlOf: (process: ServerProcess) => string,
  fetchImpl: typeof fetch,
): Promise<E2eServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'trellis-agent-e2e-server-'));
  const fullEnv = {
    TRELLIS_DATA_DIR: dataDir,
    CLI_JWT_SECRET: JWT_SECRET,
    TRELLIS_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
    RELEASE_API_SECRET: RELEASE_SECRET,
    ...env,
  };
  let process: ServerProcess = await startServerProcess(fullEnv);
  const url = urlOf(process);
  const user = await login(url, fetchImpl);
  return {
    url,
    user,
    dataDir,
    output: () => process.output(),
    async restart(downMs = 0) {
      await process.stop();
      if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
      process = await startServerProcess({ ...fullEnv, PORT: new URL(url).port });
    },
    async kill() {
      await process.stop('SIGKILL');
    },
    async stop() {
      await process.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Signs in through the bootstrap link and the device login, as the CLI would. */
export async function login(
  url: string,
  fetchImpl: typeof fetch = fetch,
): Promise<TrellisClient & { token: string; refreshToken: string }> {
  const cookie = await bootstrapSessionCookie(url, BOOTSTRAP_TOKEN, fetchImpl);
  const { access_token, refresh_token } = await deviceLoginTokens(url, cookie, new URL(url).origin, fetchImpl);
  const client = new TrellisClient({
    baseUrl: url,
    auth: { kind: 'bearer', accessToken: () => access_token },
    fetch: fetchImpl,
  });
  return Object.assign(client, { token: access_token, refreshToken: refresh_token });
}

export type { AgentProcess } from '@trellis/testkit';

export interface AgentSpec {
  name?: string;
  args?: string[];
  env?: Record<string, string>;
  /** Reuse a registration (a restarted agent). */
  credentials?: { workerId: string; workerToken: string };
  workDir?: string;
}

/** Registers (unless given credentials) and starts a real `trellis-agent run` process. */
export async function startAgent(server: Pick<E2eServer, 'url' | 'user'>, spec: AgentSpec = {}): Promise<AgentProcess> {
  let credentials = spec.credentials;
  if (!credentials) {
    const registered = await server.user.registerAgent({ name: spec.name ?? 'agent' });
    credentials = { workerId: registered.worker_id, workerToken: registered.worker_token };
  }
  const workDir = spec.workDir ?? mkdtempSync(join(tmpdir(), 'trellis-agent-e2e-work-'));
  started.push(workDir);
  return startAgentProcess(server.url, credentials, {
    workDir,
    engineBin: TOFU ?? 'tofu',
    ...(spec.args ? { args: spec.args } : {}),
    ...(spec.env ? { env: spec.env } : {}),
  });
}

const started: string[] = [];

/**
 * Kills whatever still runs in an agent work dir (an engine orphaned by `kill -9` of its agent),
 * found by its working directory; only processes these tests started live there.
 */
export function killLeftovers(): void {
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const cwd = readlinkSync(`/proc/${pid}/cwd`);
      if (started.some((dir) => cwd.startsWith(dir))) process.kill(Number(pid), 'SIGKILL');
    } catch {
      // gone, or not ours to see
    }
  }
  for (const dir of started.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** Polls `check` until it returns a value other than undefined (no timing assertion: a deadline only). */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const TERMINAL: JobStatus[] = ['SUCCESS', 'FAILED', 'CANCELLED'];

export function waitForJob(
  server: Pick<E2eServer, 'user'>,
  id: string,
  statuses = TERMINAL,
  timeoutMs = 120_000,
): Promise<Job> {
  return eventually(
    `job ${id} to be ${statuses.join('/')}`,
    async () => {
      const job = await server.user.getJob(id);
      return statuses.includes(job.status) ? job : undefined;
    },
    timeoutMs,
  );
}

/** Queues a plan of the vine on `agent` (assigned: no test hangs on which agent claims first) and waits for its end. */
export async function planOn(
  server: Pick<E2eServer, 'user'>,
  vineId: string,
  agent: Pick<AgentProcess, 'workerId'>,
): Promise<Job> {
  const plan = await server.user.createJob({
    job_type: 'PLAN',
    configuration_id: vineId,
    assigned_worker_id: agent.workerId,
  });
  return waitForJob(server, plan.id);
}

/** Queues the apply of `plan` of the vine on `agent`. */
export function deployOn(
  server: Pick<E2eServer, 'user'>,
  vineId: string,
  plan: Pick<Job, 'id'>,
  agent: Pick<AgentProcess, 'workerId'>,
) {
  return server.user.createJob({
    job_type: 'DEPLOY',
    configuration_id: vineId,
    plan_job_id: plan.id,
    assigned_worker_id: agent.workerId,
  });
}

/** Every log chunk of a job, in order. */
export async function jobLog(server: E2eServer, id: string): Promise<LogChunk[]> {
  const chunks: LogChunk[] = [];
  for (;;) {
    const page = await server.user.getJobLogs(id, { after: chunks.at(-1)?.id ?? 0, limit: 5000 });
    chunks.push(...page.logs);
    if (!page.has_more) return chunks;
  }
}

export async function logText(server: E2eServer, id: string): Promise<string> {
  return (await jobLog(server, id)).map((chunk) => chunk.log_chunk).join('');
}

/** A vineyard and a vine of a fixture, for the test's user. */
export async function vineOf(
  server: Pick<E2eServer, 'user'>,
  name: string,
  fixtureName: string,
  variables: Record<string, string | { value: string; sensitive?: boolean }> = {},
) {
  const { vine } = await vineyardWithVine(server.user, name, {
    source: fixture(fixtureName),
    variables,
    engine: 'tofu',
  });
  return vine;
}
