import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mkdtempSync } from 'node:fs';
import {
  caRequest,
  createTestDatabase,
  fileUrl,
  formFields,
  makeTestCa,
  requirePeer,
  type ServerProcess,
  startServerProcess,
  Terminal,
  type TestCa,
  type TestDatabase,
  testPostgresPoolSize,
} from '@trellis/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOOTSTRAP_TOKEN } from '../support/controlPlane.js';
import { describeEachDialect } from '../support/dialects.js';

const tofu = requirePeer('tofu', 'the stock tofu CLI through the cloud block');

function cloudBlock(host: string, org: string, workspaces: string): string {
  return `terraform {\n  cloud {\n    hostname     = "${host}"\n    organization = "${org}"\n    workspaces { ${workspaces} }\n  }\n}\n`;
}

const APP = `resource "terraform_data" "a" {
  input = "hello"
}
output "greeting" {
  value = "hi"
}
output "secret" {
  value     = "s3cr3t"
  sensitive = true
}
`;

describeEachDialect('the stock tofu CLI through the cloud block, over TLS', (dialect) => {
  describe.skipIf(!tofu)('against a real trellis-server', () => {
    let ca: TestCa;
    let database: TestDatabase;
    let server: ServerProcess;
    let base: string;
    let host: string;
    let cookie: string;
    let terminal: Terminal;
    let token: string;
    let org: string;
    const dirs: string[] = [];

    const api = (path: string, options: { method?: string; body?: unknown; bearer?: string } = {}) =>
      caRequest(ca, `${base}${path}`, {
        method: options.method ?? 'GET',
        headers: {
          authorization: `Bearer ${options.bearer ?? token}`,
          ...(options.body === undefined ? {} : { 'content-type': 'application/vnd.api+json' }),
        },
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
      });
    const json = async (path: string) => {
      const answer = await api(path);
      expect(answer.status, `${path}: ${answer.text}`).toBe(200);
      return JSON.parse(answer.text);
    };
    const run = async (cwd: string, args: string[], input?: string) => {
      // These cases are of the state the CLI keeps in Trellis while it runs on the laptop: remote
      // runs (issue 27, the default of a workspace) have their own suite with an agent.
      const env = { TF_FORCE_LOCAL_BACKEND: '1' };
      const result = await terminal.run(cwd, args, input === undefined ? { env } : { input, env });
      return { ...result, output: `${result.stdout}\n${result.stderr}` };
    };

    beforeAll(async () => {
      ca = makeTestCa();
      database = await createTestDatabase(dialect);
      const dataDir = mkdtempSync(join(tmpdir(), 'trellis-tfe-data-'));
      dirs.push(dataDir, ca.dir);
      server = await startServerProcess({
        DATABASE_URL: database.url,
        TRELLIS_DB_POOL_MAX: String(testPostgresPoolSize()),
        TRELLIS_DATA_DIR: dataDir,
        TRELLIS_ARTIFACTS_URL: fileUrl(join(dataDir, 'artifacts')),
        TRELLIS_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
        TRELLIS_TLS_CERT_FILE: ca.certFile,
        TRELLIS_TLS_KEY_FILE: ca.keyFile,
      });
      const port = new URL(server.url).port;
      expect(server.url.startsWith('https://')).toBe(true);
      host = `localhost:${port}`;
      base = `https://${host}`;
      const signIn = await caRequest(ca, `${base}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`);
      const cookies = [signIn.headers['set-cookie'] ?? []].flat();
      cookie = (cookies.find((value) => value.includes('trellis_session=')) ?? '').split(';')[0] as string;
      expect(cookie, `${signIn.status} ${JSON.stringify(signIn.headers)} ${signIn.text}`).not.toBe('');
      terminal = new Terminal(tofu as string, ca);
      dirs.push(terminal.home);
    }, 120_000);

    afterAll(async () => {
      await server?.stop();
      await database?.drop();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    });

    it('answers discovery whatever token comes with it', async () => {
      const answer = await caRequest(ca, `${base}/.well-known/terraform.json`, {
        headers: { authorization: 'Bearer trt_expired-or-revoked' },
      });
      expect(answer.status).toBe(200);
      const services = JSON.parse(answer.text);
      expect(services['tfe.v2']).toBe('/api/v2/');
      expect(services['state.v2']).toBe('/api/v2/');
      expect(services['login.v1']).toMatchObject({ client: 'terraform-cli', grant_types: ['authz_code'] });
    });

    it('tofu login gets a revocable API token through the consent page and the loopback redirect', async () => {
      const login = run(terminal.home, ['login', host], 'yes\n');
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(), 60_000);
      // The stand-in browser: a signed-in person opens the page, approves, and is sent back to the CLI.
      const authorizeUrl = await terminal.openedUrl(abort.signal);
      clearTimeout(timer);
      expect(authorizeUrl.startsWith(`${base}/oauth/authorize?`)).toBe(true);
      const consent = await caRequest(ca, authorizeUrl, { headers: { cookie } });
      expect(consent.status).toBe(200);
      expect(consent.text).toContain('OpenTofu is asking for an API token');
      const approved = await caRequest(ca, `${base}/oauth/authorize`, {
        method: 'POST',
        headers: { cookie, origin: base, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(formFields(consent.text)).toString(),
      });
      expect(approved.status).toBe(303);
      const loopback = String(approved.headers.location);
      expect(loopback).toMatch(/^http:\/\/localhost:100(0\d|10)\/login\?code=/);
      expect((await fetch(loopback)).status).toBe(200);
      const result = await login;
      expect(result.code, result.output).toBe(0);
      token = terminal.savedToken(host) as string;
      expect(token).toMatch(/^trt_/);
      // The token is the person's own API token, listed with the others, for 90 days.
      const tokens = JSON.parse((await api('/api/tokens')).text).tokens as { name: string; expires_at: string }[];
      const minted = tokens.find((entry) => entry.name.startsWith('tofu-login-'));
      expect(minted).toBeDefined();
      const days = (Date.parse(minted?.expires_at ?? '') - Date.now()) / 86_400_000;
      expect(days).toBeGreaterThan(89);
      expect(days).toBeLessThanOrEqual(90);
      org = (await json('/api/v2/account/details')).data.attributes.username;
    }, 90_000);

    it('init makes the workspace, apply keeps the state in Trellis, a second plan has no changes', async () => {
      const dir = terminal.dir({ 'main.tf': cloudBlock(host, org, 'name = "app"') + APP });
      expect((await run(dir, ['init', '-input=false'])).code).toBe(0);
      const workspace = (await json(`/api/v2/organizations/${org}/workspaces/app`)).data;
      expect(workspace.attributes).toMatchObject({ name: 'app', 'execution-mode': 'remote', locked: false });
      const applied = await run(dir, ['apply', '-auto-approve', '-input=false']);
      expect(applied.code, applied.output).toBe(0);
      const history = await json('/api/cli/configurations/app/state-versions');
      expect(history.versions).toHaveLength(1);
      expect(history.versions[0]).toMatchObject({ serial: 1, job_id: null });
      expect(history.lock).toBeNull();
      const plan = await run(dir, ['plan', '-detailed-exitcode', '-input=false']);
      expect(plan.code, plan.output).toBe(0);
      const secret = await run(dir, ['output', '-raw', 'secret']);
      expect(secret.stdout).toBe('s3cr3t');
      // Outputs carry their detailed type, and a viewer-level read hides nothing it should not show here.
      const outputs = (await json(`/api/v2/workspaces/${workspace.id}/current-state-version-outputs`)).data;
      expect(outputs.map((output: { attributes: { name: string } }) => output.attributes.name)).toEqual([
        'greeting',
        'secret',
      ]);
      expect(outputs[0].attributes['detailed-type']).toBe('string');
    }, 180_000);

    it('refuses an apply while the lock is held, and tofu force-unlock releases it', async () => {
      const workspace = (await json(`/api/v2/organizations/${org}/workspaces/app`)).data;
      const locked = await api(`/api/v2/workspaces/${workspace.id}/actions/lock`, {
        method: 'POST',
        body: { reason: 'held by the test' },
      });
      expect(locked.status, locked.text).toBe(200);
      const dir = terminal.dir({
        'main.tf': cloudBlock(host, org, 'name = "app"') + APP.replace('"hello"', '"again"'),
      });
      expect((await run(dir, ['init', '-input=false'])).code).toBe(0);
      const refused = await run(dir, ['apply', '-auto-approve', '-input=false', '-lock-timeout=0s']);
      expect(refused.code).toBe(1);
      expect(refused.output).toMatch(/lock/i);
      expect((await json('/api/cli/configurations/app/state-versions')).lock).toMatchObject({
        info: { Operation: 'TerraformCloudLock' },
      });
      const released = await run(dir, ['force-unlock', '-force', `${org}/app`]);
      expect(released.code, released.output).toBe(0);
      expect((await json('/api/cli/configurations/app/state-versions')).lock).toBeNull();
      const applied = await run(dir, ['apply', '-auto-approve', '-input=false']);
      expect(applied.code, applied.output).toBe(0);
      expect((await json('/api/cli/configurations/app/state-versions')).versions).toHaveLength(2);
    }, 180_000);

    it('state pull and push, and a rollback through the API', async () => {
      const dir = terminal.dir({ 'main.tf': cloudBlock(host, org, 'name = "app"') + APP });
      expect((await run(dir, ['init', '-input=false'])).code).toBe(0);
      const pulled = await run(dir, ['state', 'pull']);
      expect(pulled.code).toBe(0);
      const state = JSON.parse(pulled.stdout) as {
        serial: number;
        resources: { instances: { attributes: { input: unknown } }[] }[];
      };
      expect(state.serial).toBe(2);
      writeFileSync(join(dir, 'pushed.tfstate'), JSON.stringify({ ...state, serial: state.serial + 1 }));
      const pushed = await run(dir, ['state', 'push', 'pushed.tfstate']);
      expect(pushed.code, pushed.output).toBe(0);
      const history = await json('/api/cli/configurations/app/state-versions');
      const serials = history.versions.map((version: { serial: number }) => version.serial);
      expect(serials).toHaveLength(3);
      expect(serials[0]).toBeGreaterThan(2);
      const first = history.versions[2].id;
      const rolledBack = await caRequest(ca, `${base}/api/cli/configurations/app/state-versions/${first}/rollback`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
      });
      expect(rolledBack.status, rolledBack.text).toBe(201);
      expect(JSON.parse(rolledBack.text).serial).toBe(serials[0] + 1);
      const after = JSON.parse((await run(dir, ['state', 'pull'])).stdout);
      expect(after.serial).toBe(serials[0] + 1);
      expect(after.resources[0].instances[0].attributes.input).toEqual({ value: 'hello', type: 'string' });
    }, 180_000);

    it('moves a local state in with tofu init (which asks to migrate it)', async () => {
      const dir = terminal.dir({ 'main.tf': 'resource "terraform_data" "local" {\n  input = "from my laptop"\n}\n' });
      expect((await run(dir, ['init', '-input=false'])).code).toBe(0);
      expect((await run(dir, ['apply', '-auto-approve', '-input=false'])).code).toBe(0);
      writeFileSync(
        join(dir, 'main.tf'),
        `${cloudBlock(host, org, 'name = "moved"')}resource "terraform_data" "local" {\n  input = "from my laptop"\n}\n`,
      );
      // The cloud block refuses -migrate-state and -force-copy: a plain init asks, the person answers yes.
      const migrated = await run(dir, ['init'], 'yes\nyes\n');
      expect(migrated.code, migrated.output).toBe(0);
      const list = await run(dir, ['state', 'list']);
      expect(list.stdout.trim()).toBe('terraform_data.local');
      expect((await json('/api/cli/configurations/moved/state-versions')).versions).toHaveLength(1);
      const plan = await run(dir, ['plan', '-detailed-exitcode', '-input=false']);
      expect(plan.code, plan.output).toBe(0);
    }, 180_000);

    it("terraform_remote_state (backend remote) reads another workspace's outputs", async () => {
      const dir = terminal.dir({
        'main.tf': `data "terraform_remote_state" "app" {
  backend = "remote"
  config = {
    hostname     = "${host}"
    organization = "${org}"
    workspaces = { name = "app" }
  }
}
output "from_app" {
  value = data.terraform_remote_state.app.outputs.greeting
}
`,
      });
      expect((await run(dir, ['init', '-input=false'])).code).toBe(0);
      const applied = await run(dir, ['apply', '-auto-approve', '-input=false']);
      expect(applied.code, applied.output).toBe(0);
      expect((await run(dir, ['output', '-raw', 'from_app'])).stdout).toBe('hi');
    }, 180_000);

    it('the tags strategy makes tagged workspaces and lists them', async () => {
      const dir = terminal.dir({
        'main.tf': `${cloudBlock(host, org, 'tags = ["team-a"]')}resource "terraform_data" "t" {\n  input = terraform.workspace\n}\n`,
      });
      const init = await run(dir, ['init'], 'web-1\n');
      expect(init.code, init.output).toBe(0);
      expect((await run(dir, ['workspace', 'new', 'web-2'])).code).toBe(0);
      const listed = await run(dir, ['workspace', 'list']);
      expect(listed.stdout).toMatch(/web-1[\s\S]*web-2/);
      const tagged = (await json(`/api/v2/organizations/${org}/workspaces?search%5Btags%5D=team-a`)).data;
      expect(
        tagged.map((ws: { attributes: { name: string; 'tag-names': string[] } }) => [
          ws.attributes.name,
          ws.attributes['tag-names'],
        ]),
      ).toEqual([
        ['web-1', ['team-a']],
        ['web-2', ['team-a']],
      ]);
    }, 180_000);
  });
});
