import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { TrellisClient } from '@trellis/client';
import {
  createTestDatabase,
  SERVER_BIN,
  type ServerProcess,
  startServerProcess,
  type TestDatabase,
  testPostgresPoolSize,
} from '@trellis/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { JWT_SECRET } from './support/controlPlane.js';
import { describeEachDialect } from './support/dialects.js';

const run = promisify(execFile);

describeEachDialect('trellis-server users invite: a one-time sign-in link for a teammate', (dialect) => {
  let database: TestDatabase;
  let dataDir: string;
  let env: Record<string, string>;
  let server: ServerProcess;

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    dataDir = mkdtempSync(join(tmpdir(), 'trellis-invite-'));
    env = {
      DATABASE_URL: database.url,
      TRELLIS_DB_POOL_MAX: String(testPostgresPoolSize()),
      TRELLIS_DATA_DIR: dataDir,
      TRELLIS_ARTIFACTS_URL: pathToFileURL(join(dataDir, 'artifacts')).href,
      CLI_JWT_SECRET: JWT_SECRET,
      TRELLIS_LOG_LEVEL: 'warn',
    };
    server = await startServerProcess(env);
  }, 90_000);

  afterAll(async () => {
    await server?.stop();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** The real command, as an operator runs it beside the running server (same database). */
  const invite = (...args: string[]) =>
    run(process.execPath, [SERVER_BIN, 'users', 'invite', ...args], {
      env: { ...process.env, ...env, TRELLIS_WEB_URL: server.url },
    });

  const follow = (link: string) => fetch(link, { redirect: 'manual', headers: { accept: 'application/json' } });

  it('prints a link that signs the person in once, with a web session', async () => {
    const { stdout } = await invite('bob@example.com', '--name', 'Bob Builder');
    expect(stdout).toMatch(/^One-time sign-in link for bob@example\.com \(works once, until \S+\):$/m);
    const link = /^(http\S+\/auth\/link\?token=tsl_[\w-]{43})$/m.exec(stdout)?.[1] as string;
    expect(link.startsWith(server.url)).toBe(true);

    const signedIn = await follow(`${link}&next=/vineyards`);
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get('location')).toBe('/vineyards');
    const cookie = (signedIn.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const web = new TrellisClient({ baseUrl: server.url, auth: { kind: 'cookie', cookie, origin: server.url } });
    expect(await web.whoami()).toMatchObject({ email: 'bob@example.com', name: 'Bob Builder' });

    // Once only.
    const again = await follow(link);
    expect(again.status).toBe(401);
    expect(await again.json()).toMatchObject({ code: 'invalid_sign_in_link' });
  });

  it('answers JSON with --json; a forged link is refused like a spent one', async () => {
    const { stdout } = await invite('carol@example.com', '--hours', '1', '--json');
    const answer = JSON.parse(stdout) as { email: string; user_id: string; link: string; expires_at: string };
    expect(answer).toMatchObject({
      email: 'carol@example.com',
      link: expect.stringContaining('/auth/link?token=tsl_'),
    });
    expect(Date.parse(answer.expires_at) - Date.now()).toBeLessThanOrEqual(3_600_000);
    // A made-up token of the right form is refused like a spent one, and a browser goes back to sign in.
    const forged = await fetch(`${server.url}/auth/link?token=tsl_${'A'.repeat(43)}`, {
      redirect: 'manual',
      headers: { accept: 'text/html' },
    });
    expect(forged.status).toBe(303);
    expect(forged.headers.get('location')).toBe('/signin?error=invalid_sign_in_link');
  });

  it('names what the operator typed wrong, with exit code 2', async () => {
    const badEmail = await invite('not-an-email').catch((error: { code: number; stderr: string }) => error);
    expect(badEmail).toMatchObject({ code: 2, stderr: 'trellis-server: "not-an-email" is not an email address\n' });
    const badHours = await invite('dave@example.com', '--hours', '500').catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(badHours).toMatchObject({
      code: 2,
      stderr: 'trellis-server: --hours must be a whole number from 1 to 168 (got "500")\n',
    });
  });
});
