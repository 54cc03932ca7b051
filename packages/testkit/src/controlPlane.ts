/**
 * The one way tests start a control plane in-process: trellis-server's composition
 * (`createControlPlane`) on loopback over a fresh test database of a dialect, with helpers to
 * sign in users and register agents. Imported as `@trellis/testkit/controlPlane` (not from the
 * package's index, so tests that need no server do not load it).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TrellisClient } from '@trellis/client';
import type { Clock } from '@trellis/core';
import { type ControlPlane, type ControlPlaneOptions, createControlPlane } from '@trellis/server';
import { createTestDatabase, type TestDatabase, type TestDialect, testPostgresPoolSize } from './databases.js';
import { vineyardWithVine } from './fixtures.js';
import { bootstrapSessionCookie, cliTokensFor } from './signIn.js';

export const RELEASE_SECRET = 'release-secret-for-tests';
export const BOOTSTRAP_TOKEN = 'bootstrap-token-for-tests-0123456789';
export const JWT_SECRET = 'server-test-secret-at-least-32-bytes-long!!';

/** A client speaking as an agent, with its credentials at hand for raw requests. */
export type AgentClient = TrellisClient & { workerId: string; workerToken: string };

export interface RunningControlPlane {
  url: string;
  dialect: TestDialect;
  database: TestDatabase;
  controlPlane: ControlPlane;
  /** A client signed in (CLI bearer token) as a user of that email, created on first use. */
  userClient(email?: string): Promise<TrellisClient>;
  /** The CLI access token behind `userClient(email)`. */
  accessToken(email?: string): Promise<string>;
  /** Registers an agent for the user of `owner` and returns a client speaking as it. */
  agentClient(owner: TrellisClient, name?: string): Promise<AgentClient>;
  /** The web session cookie of the bootstrap admin. */
  sessionCookie(): Promise<string>;
  close(): Promise<void>;
}

/** A real control plane on loopback over a fresh database of the dialect and a temp data dir. */
export async function startControlPlane(
  dialect: TestDialect,
  options: {
    env?: Record<string, string>;
    clock?: Clock;
    register?: ControlPlaneOptions['register'];
    logger?: ControlPlaneOptions['logger'];
    ticker?: ControlPlaneOptions['ticker'];
    overrides?: ControlPlaneOptions['overrides'];
  } = {},
): Promise<RunningControlPlane> {
  const database = await createTestDatabase(dialect);
  const dataDir = mkdtempSync(join(tmpdir(), 'trellis-server-test-'));
  let controlPlane: ControlPlane;
  try {
    controlPlane = await createControlPlane({
      env: {
        PORT: '0',
        TRELLIS_DATA_DIR: dataDir,
        DATABASE_URL: database.url,
        CLI_JWT_SECRET: JWT_SECRET,
        RELEASE_API_SECRET: RELEASE_SECRET,
        TRELLIS_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
        TRELLIS_LOG_LEVEL: 'silent',
        TRELLIS_DB_POOL_MAX: String(testPostgresPoolSize()),
        ...options.env,
      },
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.register ? { register: options.register } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.ticker ? { ticker: options.ticker } : {}),
      ...(options.overrides ? { overrides: options.overrides } : {}),
    });
  } catch (error) {
    await database.drop();
    throw error;
  }
  const { url } = await controlPlane.listen();
  const users = new Map<string, TrellisClient>();
  const tokens = new Map<string, string>();

  const running: RunningControlPlane = {
    url,
    dialect,
    database,
    controlPlane,
    async userClient(email = 'alice@example.com') {
      const existing = users.get(email);
      if (existing) return existing;
      const { access_token } = await cliTokensFor(controlPlane.useCases.auth, email);
      const client = new TrellisClient({ baseUrl: url, auth: { kind: 'bearer', accessToken: () => access_token } });
      users.set(email, client);
      tokens.set(email, access_token);
      return client;
    },
    async accessToken(email = 'alice@example.com') {
      await running.userClient(email);
      return tokens.get(email) as string;
    },
    async agentClient(owner, name = 'agent') {
      const { worker_id, worker_token } = await owner.registerAgent({ name });
      const client = new TrellisClient({
        baseUrl: url,
        auth: { kind: 'worker', workerId: worker_id, workerToken: worker_token },
      }) as AgentClient;
      client.workerId = worker_id;
      client.workerToken = worker_token;
      return client;
    },
    async sessionCookie() {
      return bootstrapSessionCookie(url, BOOTSTRAP_TOKEN);
    },
    async close() {
      await controlPlane.close();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return running;
}

export { INLINE_MAIN_TF } from './fixtures.js';

/** A vineyard and an inline configuration in it, for the user of `client` (testkit's fixture). */
export async function vineyardWithConfiguration(client: TrellisClient, name = 'web') {
  const { vineyard, vine } = await vineyardWithVine(client, name);
  return { vineyard, configuration: vine };
}
