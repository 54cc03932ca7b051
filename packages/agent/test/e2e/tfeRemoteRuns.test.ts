/**
 * Remote plans and applies from the stock `tofu` CLI (issue 27): a `cloud {}` directory, the real
 * `tofu` over TLS against a real `trellis-server`, and a real `trellis-agent` running OpenTofu. The
 * run is a PLAN job (and the DEPLOY of it) like any other: its log streams back into the terminal.
 */
import { rmSync } from 'node:fs';
import { TrellisClient } from '@trellis/client';
import {
  bootstrapSessionCookie,
  caFetch,
  caRequest,
  checkTestPostgres,
  createTestDatabase,
  deviceLoginTokens,
  fileUrl,
  makeTestCa,
  type ServerProcess,
  startServerProcess,
  Terminal,
  type TestCa,
  type TestDatabase,
  testPostgresPoolSize,
} from '@trellis/testkit';
import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AgentProcess, BOOTSTRAP_TOKEN, eventually, killLeftovers, startAgent, TOFU } from '../support/e2e.js';

const postgres = await checkTestPostgres();

function cloudBlock(host: string, org: string, workspace: string): string {
  return `terraform {\n  cloud {\n    hostname     = "${host}"\n    organization = "${org}"\n    workspaces { name = "${workspace}" }\n  }\n}\n`;
}

const APP = `variable "greeting" {
  type    = string
  default = "hello"
}
resource "terraform_data" "a" {
  input = var.greeting
}
resource "terraform_data" "b" {
  input = "b"
}
output "greeting" {
  value = terraform_data.a.output
}
`;

type User = TrellisClient & { token: string };

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe.skipIf(!TOFU || (dialect === 'postgres' && !postgres.available))(
    `remote runs from the stock tofu CLI on ${dialect}`,
    () => {
      let ca: TestCa;
      let database: TestDatabase | null = null;
      let server: ServerProcess;
      let host: string;
      let base: string;
      let user: User;
      let apiToken: string;
      let org: string;
      let terminal: Terminal;
      let agent: AgentProcess;
      const dirs: string[] = [];

      const tofu = async (cwd: string, args: string[], input?: string) => {
        const result = await terminal.run(cwd, args, input === undefined ? {} : { input });
        return { ...result, output: `${result.stdout}\n${result.stderr}` };
      };
      const tfe = async (path: string, options: { method?: string; body?: unknown } = {}) => {
        const answer = await caRequest(ca, `${base}/api/v2${path}`, {
          method: options.method ?? 'GET',
          headers: {
            authorization: `Bearer ${apiToken}`,
            ...(options.body === undefined ? {} : { 'content-type': 'application/vnd.api+json' }),
          },
          ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
        });
        return { status: answer.status, text: answer.text, json: answer.text ? JSON.parse(answer.text) : null };
      };
      /** A working directory for workspace `name`, initialised. */
      const workspaceDir = async (name: string, files: Record<string, string> = {}) => {
        const dir = terminal.dir({ 'main.tf': cloudBlock(host, org, name) + APP, ...files });
        const init = await tofu(dir, ['init', '-input=false']);
        expect(init.code, init.output).toBe(0);
        return dir;
      };

      beforeAll(async () => {
        ca = makeTestCa();
        dirs.push(ca.dir);
        const dataDir = mkdtempSync(join(tmpdir(), 'trellis-remote-runs-'));
        dirs.push(dataDir);
        if (dialect === 'postgres') database = await createTestDatabase('postgres');
        server = await startServerProcess({
          TRELLIS_DATA_DIR: dataDir,
          TRELLIS_ARTIFACTS_URL: fileUrl(join(dataDir, 'artifacts')),
          TRELLIS_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
          CLI_JWT_SECRET: 'remote-runs-e2e-jwt-secret-at-least-32-bytes',
          TRELLIS_TLS_CERT_FILE: ca.certFile,
          TRELLIS_TLS_KEY_FILE: ca.keyFile,
          ...(database ? { DATABASE_URL: database.url, TRELLIS_DB_POOL_MAX: String(testPostgresPoolSize()) } : {}),
        });
        base = server.url;
        host = `localhost:${new URL(base).port}`;
        base = `https://${host}`;
        const fetchImpl = caFetch(ca);
        const cookie = await bootstrapSessionCookie(base, BOOTSTRAP_TOKEN, fetchImpl);
        const { access_token } = await deviceLoginTokens(base, cookie, base, fetchImpl);
        const client = new TrellisClient({
          baseUrl: base,
          auth: { kind: 'bearer', accessToken: () => access_token },
          fetch: fetchImpl,
        });
        user = Object.assign(client, { token: access_token });
        // The token `tofu login` would have saved: a personal API token.
        apiToken = (await user.createToken({ name: 'remote-runs' })).token;
        terminal = new Terminal(TOFU as string, ca);
        dirs.push(terminal.home);
        mkdirSync(join(terminal.home, '.terraform.d'), { recursive: true });
        writeFileSync(
          join(terminal.home, '.terraform.d', 'credentials.tfrc.json'),
          JSON.stringify({ credentials: { [host]: { token: apiToken } } }),
        );
        org = (await tfe('/account/details')).json.data.attributes.username;
        agent = await startAgent(
          { url: base, user },
          { name: `remote-${dialect}`, env: { NODE_EXTRA_CA_CERTS: ca.caFile, SSL_CERT_FILE: ca.caFile } },
        );
      }, 180_000);

      afterAll(async () => {
        await agent?.stop();
        killLeftovers();
        await server?.stop();
        await database?.drop();
        for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
      });

      it('tofu plan runs on the agent and streams its plan into the terminal', async () => {
        const dir = await workspaceDir('plans');
        const plan = await tofu(dir, ['plan', '-input=false']);
        expect(plan.code, plan.output).toBe(0);
        expect(plan.output).toContain('Running plan in');
        expect(plan.output).toContain('terraform_data.a will be created');
        expect(plan.output).toContain('Plan: 2 to add, 0 to change, 0 to destroy.');
        // It is a Trellis job like any other: a speculative PLAN of the person, triggered by the CLI.
        const jobs = await user.listJobs({ configuration: 'plans' } as never);
        expect(JSON.stringify(jobs)).toContain('"cli"');
      }, 240_000);
    },
  );
}
