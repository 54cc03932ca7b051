/**
 * `trellis tokens create|list|revoke` and `TRELLIS_TOKEN` with an API token, through the real
 * binary and a real server: the token is printed once, alone on stdout; it works for any command
 * with nothing on disk; it wins over a saved login and is never refreshed; revoked, it fails.
 */
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, runTrellis, TempHome, TestServer } from './harness.js';

let server: TestServer;
let admin: TempHome;
const homes: TempHome[] = [];

beforeAll(async () => {
  server = await new TestServer().start();
  admin = new TempHome();
  homes.push(admin);
  await login(server, admin);
});
afterAll(async () => {
  await server?.destroy();
  for (const home of homes) home.remove();
});

function ciHome(): TempHome {
  const home = new TempHome();
  homes.push(home);
  return home;
}

async function createToken(args: string[] = []): Promise<string> {
  const result = await runTrellis(['tokens', 'create', '--name', 'ci', ...args], { env: admin.env() });
  expect(result.code, result.stderr).toBe(0);
  return result.stdout.trim();
}

describe('API tokens from the CLI', () => {
  it('prints the token once, alone on stdout, and the rest on stderr', async () => {
    const result = await runTrellis(['tokens', 'create', '--name', 'deploys', '--expires-in-days', '30'], {
      env: admin.env(),
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^trt_[A-Za-z0-9_-]{43}\n$/);
    expect(result.stderr).toContain('personal token');
    expect(result.stderr).toContain('shown only once');
    expect(result.stderr).not.toContain(result.stdout.trim());

    const json = await runTrellis(['tokens', 'create', '--name', 'scripted', '--json'], { env: admin.env() });
    expect(json.code).toBe(0);
    const created = JSON.parse(json.stdout);
    expect(created).toMatchObject({ name: 'scripted', org_id: null, role: null, expires_at: null });
    expect(created.token).toMatch(/^trt_/);
  });

  it('lists tokens without their secret', async () => {
    const token = await createToken();
    const listed = await runTrellis(['tokens', 'list', '--json'], { env: admin.env() });
    expect(listed.code).toBe(0);
    const tokens = JSON.parse(listed.stdout) as { name: string; id: string }[];
    expect(tokens.map((entry) => entry.name)).toContain('ci');
    expect(listed.stdout).not.toContain(token);
    expect(listed.stdout).not.toContain('trt_');
    const text = await runTrellis(['tokens', 'list'], { env: admin.env() });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/NAME\s+ROLE\s+CREATED\s+EXPIRES\s+LAST USED\s+ID/);
    expect(text.stdout).toContain('deploys');
  });

  it('works as TRELLIS_TOKEN for any command, with nothing written to disk', async () => {
    const token = await createToken();
    const ci = ciHome();
    const env = ci.env({ TRELLIS_TOKEN: token, TRELLIS_SERVER: server.url });
    const whoami = await runTrellis(['whoami', '--json'], { env });
    expect(whoami.code, whoami.stderr).toBe(0);
    expect(JSON.parse(whoami.stdout).email).toBe('admin@localhost');
    const made = await runTrellis(['vineyards', 'create', 'made-by-ci', '--json'], { env });
    expect(made.code, made.stderr).toBe(0);
    const listed = await runTrellis(['vineyards', 'list', '--json'], { env: admin.env() });
    expect(listed.stdout).toContain('made-by-ci');
    expect(existsSync(ci.authPath)).toBe(false);
    // The token is used, so the server recorded it.
    const tokens = JSON.parse((await runTrellis(['tokens', 'list', '--json'], { env: admin.env() })).stdout) as {
      last_used_at: string | null;
    }[];
    expect(tokens.some((entry) => entry.last_used_at !== null)).toBe(true);
  });

  it('wins over the saved login, is never refreshed, and fails once revoked', async () => {
    const token = await createToken();
    const listed = JSON.parse((await runTrellis(['tokens', 'list', '--json'], { env: admin.env() })).stdout) as {
      id: string;
    }[];
    const id = listed[0]?.id as string;
    const revoke = await runTrellis(['tokens', 'revoke', id], { env: admin.env() });
    expect(revoke.code, revoke.stderr).toBe(0);
    expect(revoke.stderr).toContain(`Revoked token ${id}`);

    const savedBefore = readFileSync(admin.authPath, 'utf8');
    // A saved, valid login is there too: TRELLIS_TOKEN still decides, and it is refused.
    const refused = await runTrellis(['whoami'], {
      env: admin.env({ TRELLIS_TOKEN: token, TRELLIS_SERVER: server.url }),
    });
    expect(refused.code).toBe(3);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain('[invalid_token]');
    expect(refused.stderr).toContain('TRELLIS_TOKEN was refused');
    expect(readFileSync(admin.authPath, 'utf8')).toBe(savedBefore);
  });

  it('an API token cannot make tokens; bad flags are usage errors', async () => {
    const token = await createToken();
    const env = ciHome().env({ TRELLIS_TOKEN: token, TRELLIS_SERVER: server.url });
    const minted = await runTrellis(['tokens', 'create', '--name', 'successor'], { env });
    expect(minted.code).toBe(1);
    expect(minted.stdout).toBe('');
    expect(minted.stderr).toContain('[token_not_allowed]');

    const noOrg = await runTrellis(['tokens', 'create', '--name', 'x', '--role', 'admin'], { env: admin.env() });
    expect(noOrg.code).toBe(2);
    expect(noOrg.stderr).toContain('--role needs --org');
    const days = await runTrellis(['tokens', 'create', '--name', 'x', '--expires-in-days', '400'], {
      env: admin.env(),
    });
    expect(days.code).toBe(2);
    expect((await runTrellis(['tokens', 'revoke', 'not-a-uuid'], { env: admin.env() })).code).toBe(2);
  });

  it('an organization token does only what its organization allows: no organizations, no invitations (exit 6)', async () => {
    const home = await runTrellis(['orgs', 'create', 'token-home'], { env: admin.env() });
    expect(home.code).toBe(0);
    const token = await createToken(['--org', home.stdout.trim(), '--role', 'admin']);
    const env = ciHome().env({ TRELLIS_TOKEN: token, TRELLIS_SERVER: server.url });
    const created = await runTrellis(['orgs', 'create', 'minted-by-a-token'], { env });
    expect(created.code).toBe(6);
    expect(created.stderr).toContain('[org_token_not_allowed]; use a personal token or `trellis login`');
    const invitations = await runTrellis(['orgs', 'invitations'], { env });
    expect(invitations.code).toBe(6);
    expect(invitations.stderr).toContain('cannot read invitations');
  });
});
