/**
 * `trellis login`, `whoami` and `logout` end to end: the real binary against the real control
 * plane, with the bootstrap web session approving logins in place of a browser and the
 * verification code fed on stdin.
 */
import { statSync } from 'node:fs';
import { dirname } from 'node:path';
import { TrellisApiError, TrellisClient } from '@trellis/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, RunningTrellis, runTrellis, TempHome, TestServer, WEB_URL } from './harness.js';

let server: TestServer;
const homes: TempHome[] = [];
function freshHome(): TempHome {
  const home = new TempHome();
  homes.push(home);
  return home;
}

beforeAll(async () => {
  server = await new TestServer().start();
});
afterAll(async () => {
  await server?.destroy();
  for (const home of homes) home.remove();
});

describe('trellis login', () => {
  it('prints the approval URL, exchanges the code from stdin and saves the login with mode 0600', async () => {
    const home = freshHome();
    const run = new RunningTrellis(['login', '--server', server.url, '--no-browser'], home.env());
    const [url, deviceCode] = await run.waitFor(/\S+\/cli\/login\?device_code=([0-9a-f-]{36})/);
    expect(url).toBe(`${server.url}/cli/login?device_code=${deviceCode}`);
    await run.waitFor(/Verification code: /);
    run.write(`${await server.approve(deviceCode as string)}\n`);
    const result = await run.done;
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`Logged in to ${server.url} as admin@localhost`);

    expect(statSync(home.authPath).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(home.authPath)).mode & 0o077).toBe(0);
    const saved = home.readAuth();
    expect(saved.server).toBe(server.url);
    expect(saved.user_email).toBe('admin@localhost');
    const expiresIn = Date.parse(saved.access_token_expires_at) - Date.now();
    expect(expiresIn).toBeGreaterThan(50 * 60_000);
    expect(expiresIn).toBeLessThanOrEqual(60 * 60_000);
    // The saved tokens work: the server knows this user.
    const client = new TrellisClient({
      baseUrl: server.url,
      auth: { kind: 'bearer', accessToken: () => saved.access_token },
    });
    expect((await client.whoami()).email).toBe('admin@localhost');
  });

  it('opens the page of the web interface given by --web-url or TRELLIS_WEB_URL', async () => {
    const flag = new RunningTrellis(
      ['login', '--server', server.url, '--no-browser', '--web-url', WEB_URL],
      freshHome().env(),
    );
    await flag.waitFor(new RegExp(`${WEB_URL}/cli/login\\?device_code=[0-9a-f-]{36}`));
    flag.child.stdin?.end();
    expect((await flag.done).code).toBe(3);
    const env = new RunningTrellis(
      ['login', '--no-browser'],
      freshHome().env({ TRELLIS_SERVER: server.url, TRELLIS_WEB_URL: WEB_URL }),
    );
    await env.waitFor(new RegExp(`${WEB_URL}/cli/login\\?device_code=[0-9a-f-]{36}`));
    env.child.stdin?.end();
    const result = await env.done;
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('Error: no verification code was entered; run `trellis login` again');
  });

  it('asks again when the login is not approved yet, then succeeds once it is', async () => {
    const home = freshHome();
    const run = new RunningTrellis(['login', '--server', server.url, '--no-browser'], home.env());
    const [, deviceCode] = await run.waitFor(/device_code=([0-9a-f-]{36})/);
    run.write('BCDFGH\n');
    await run.waitFor(/has not been approved yet: open the page above, approve it/);
    run.write(`${await server.approve(deviceCode as string)}\n`);
    const result = await run.done;
    expect(result.code).toBe(0);
    expect(home.readAuth().user_email).toBe('admin@localhost');
  });

  it('says how many attempts are left after a wrong code, accepts the right one, and ignores case and spaces', async () => {
    const home = freshHome();
    const run = new RunningTrellis(['login', '--server', server.url, '--no-browser'], home.env());
    const [, deviceCode] = await run.waitFor(/device_code=([0-9a-f-]{36})/);
    const code = await server.approve(deviceCode as string);
    const wrong = code === 'BBBBBB' ? 'CCCCCC' : 'BBBBBB';
    run.write(`${wrong}\n`);
    await run.waitFor(/wrong verification code \(4 attempts left\); try again/);
    run.write(`${wrong}\n`.repeat(3));
    await run.waitFor(/wrong verification code \(1 attempt left\); try again/);
    expect(run.stderr).not.toContain('1 attempts');
    // As a person may type it: lower case, with a space in the middle.
    run.write(`${code.slice(0, 3).toLowerCase()} ${code.slice(3).toLowerCase()}\n`);
    const result = await run.done;
    expect(result.code).toBe(0);
  });

  it('gives up with exit 3 after too many wrong codes', async () => {
    const home = freshHome();
    const run = new RunningTrellis(['login', '--server', server.url, '--no-browser'], home.env());
    const [, deviceCode] = await run.waitFor(/device_code=([0-9a-f-]{36})/);
    const code = await server.approve(deviceCode as string);
    const wrong = code === 'BBBBBB' ? 'CCCCCC' : 'BBBBBB';
    run.write(`${wrong}\n`.repeat(6));
    const result = await run.done;
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(
      /Error: wrong verification code; too many attempts, run the login again \[invalid_grant\]\n$/,
    );
    expect(() => home.readAuth()).toThrow();
  });
});

describe('logging in again', () => {
  it('replaces the saved login and revokes the one it replaces', async () => {
    const home = freshHome();
    await login(server, home);
    const first = home.readAuth();
    await login(server, home);
    const second = home.readAuth();
    expect(second.refresh_token).not.toBe(first.refresh_token);
    const anonymous = new TrellisClient({ baseUrl: server.url });
    await expect(anonymous.refreshTokens(first.refresh_token)).rejects.toMatchObject({ status: 401 });
    expect((await runTrellis(['whoami'], { env: home.env() })).code).toBe(0);
  });
});

describe('trellis login --json', () => {
  it('prints the server and the email as JSON', async () => {
    const home = freshHome();
    const run = new RunningTrellis(['login', '--server', server.url, '--no-browser', '--json'], home.env());
    const [, deviceCode] = await run.waitFor(/device_code=([0-9a-f-]{36})/);
    run.write(`${await server.approve(deviceCode as string)}\n`);
    const result = await run.done;
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ server: server.url, user_email: 'admin@localhost' });
  });
});

describe('trellis whoami', () => {
  it('shows the user as a table and as JSON', async () => {
    const home = freshHome();
    await login(server, home);
    const table = await runTrellis(['whoami'], { env: home.env() });
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(
      new RegExp(`^Server: +${server.url}\\nEmail: +admin@localhost\\nName: +\\S+\\nUser ID: +[0-9a-f-]{36}\\n$`),
    );
    const json = await runTrellis(['whoami', '--json'], { env: home.env() });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ server: server.url, email: 'admin@localhost' });
  });
});

describe('trellis logout', () => {
  it('revokes the refresh token on the server and deletes the file', async () => {
    const home = freshHome();
    await login(server, home);
    const { refresh_token } = home.readAuth();
    const result = await runTrellis(['logout'], { env: home.env() });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`Logged out of ${server.url} (admin@localhost)`);
    expect(() => statSync(home.authPath)).toThrow();
    const refused = await new TrellisClient({ baseUrl: server.url })
      .refreshTokens(refresh_token)
      .catch((error) => error);
    expect(refused).toBeInstanceOf(TrellisApiError);
    expect((refused as TrellisApiError).status).toBe(401);

    const after = await runTrellis(['whoami'], { env: home.env() });
    expect(after.code).toBe(3);
    expect(after.stderr).toBe('Error: not logged in; run `trellis login`\n');
    const again = await runTrellis(['logout', '--json'], { env: home.env() });
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ logged_out: false });
  });
});
