import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  caRequest,
  createTestDatabase,
  makeTestCa,
  type ServerProcess,
  startServerProcess,
  type TestCa,
  type TestDatabase,
  type TestDialect,
  testPostgresPoolSize,
} from '@trellis/testkit';
import { BOOTSTRAP_TOKEN } from './controlPlane.js';
import { type RegistryArtifacts, startRegistryArtifacts } from './registryArtifacts.js';

/** A real `trellis-server` over TLS for the registry's stock-`tofu` suites, signed in as its bootstrap admin. */
export interface RegistryServer {
  ca: TestCa;
  server: ServerProcess;
  /** `localhost:<port>`: the registry host `tofu` names. */
  host: string;
  /** `https://localhost:<port>`. */
  base: string;
  /** A JSON POST as the signed-in person (their session), e.g. `/api/orgs` or `/api/tokens`. */
  asPerson(path: string, body: unknown): ReturnType<typeof caRequest>;
  /** A scratch directory, removed at `stop`. */
  work: string;
  stop(): Promise<void>;
}

/**
 * Starts the server on `dialect` beside its artifact store (`startRegistryArtifacts`: the
 * filesystem with SQLite, S3 with Postgres), over TLS with a throw-away CA, and signs in through
 * the bootstrap link.
 */
export async function startRegistryServer(
  dialect: TestDialect,
  env: Record<string, string> = {},
): Promise<RegistryServer> {
  const ca = makeTestCa();
  const work = mkdtempSync(join(tmpdir(), 'trellis-registry-'));
  let database: TestDatabase | undefined;
  let artifacts: RegistryArtifacts | undefined;
  let server: ServerProcess | undefined;
  const stop = async () => {
    await server?.stop();
    await artifacts?.stop();
    await database?.drop();
    for (const dir of [work, ca.dir]) rmSync(dir, { recursive: true, force: true });
  };
  try {
    database = await createTestDatabase(dialect);
    artifacts = await startRegistryArtifacts(dialect, work);
    server = await startServerProcess({
      DATABASE_URL: database.url,
      TRELLIS_DB_POOL_MAX: String(testPostgresPoolSize()),
      TRELLIS_DATA_DIR: join(work, 'data'),
      ...artifacts.env,
      TRELLIS_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
      TRELLIS_TLS_CERT_FILE: ca.certFile,
      TRELLIS_TLS_KEY_FILE: ca.keyFile,
      ...env,
    });
    const host = `localhost:${new URL(server.url).port}`;
    const base = `https://${host}`;
    const signIn = await caRequest(ca, `${base}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`);
    const cookie = (
      [signIn.headers['set-cookie'] ?? []].flat().find((value) => value.includes('trellis_session=')) ?? ''
    ).split(';')[0] as string;
    if (cookie === '') throw new Error(`the bootstrap sign-in set no session (HTTP ${signIn.status})`);
    const asPerson = (path: string, body: unknown) =>
      caRequest(ca, `${base}${path}`, {
        method: 'POST',
        headers: { cookie, origin: base, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    return { ca, server, host, base, asPerson, work, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
