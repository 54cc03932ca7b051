import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TrellisClient } from '@trellis/client';
import type { Clock } from '@trellis/core';
import { type ControlPlane, createControlPlane } from '@trellis/server';
import { createTestDatabase, type TestDatabase, type TestDialect } from '@trellis/testkit';

export const RELEASE_SECRET = 'release-secret-for-tests';
export const BOOTSTRAP_TOKEN = 'bootstrap-token-for-tests';
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
  options: { env?: Record<string, string>; clock?: Clock } = {},
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
        ...options.env,
      },
      ...(options.clock ? { clock: options.clock } : {}),
    });
  } catch (error) {
    await database.drop();
    throw error;
  }
  const { url } = await controlPlane.listen();
  const users = new Map<string, TrellisClient>();
  const tokens = new Map<string, string>();

  return {
    url,
    dialect,
    database,
    controlPlane,
    async userClient(email = 'alice@example.com') {
      const existing = users.get(email);
      if (existing) return existing;
      const { auth } = controlPlane.useCases;
      const user = await auth.ensureUser({ email });
      const deviceCode = crypto.randomUUID();
      const { verification_code } = await auth.generateCliLogin({ userId: user.id, email }, deviceCode);
      const { access_token } = await auth.exchangeCliLogin({ device_code: deviceCode, verification_code });
      const client = new TrellisClient({ baseUrl: url, auth: { kind: 'bearer', accessToken: () => access_token } });
      users.set(email, client);
      tokens.set(email, access_token);
      return client;
    },
    async accessToken(email = 'alice@example.com') {
      await this.userClient(email);
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
      const response = await fetch(`${url}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`, { redirect: 'manual' });
      return (response.headers.get('set-cookie') ?? '').split(';')[0] as string;
    },
    async close() {
      await controlPlane.close();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export const INLINE_MAIN_TF = `
variable "greeting" {
  type    = string
  default = "hello"
}
output "message" {
  value = var.greeting
}
`;

/** A vineyard and an inline configuration in it, for the user of `client`. */
export async function vineyardWithConfiguration(client: TrellisClient, name = 'web') {
  const vineyard = await client.createVineyard(`${name}-yard`);
  const configuration = await client.createConfiguration({
    name,
    vineyard_id: vineyard.id,
    source: { type: 'inline', files: { 'main.tf': INLINE_MAIN_TF } },
    variables: { greeting: 'hi', db_password: { value: 's3cret-value', sensitive: true } },
  });
  return { vineyard, configuration };
}
