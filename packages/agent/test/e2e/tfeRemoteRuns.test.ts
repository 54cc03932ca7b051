/**
 * Remote plans and applies from the stock `tofu` CLI (issue 27): a `cloud {}` directory, the real
 * `tofu` over TLS against a real `trellis-server`, and a real `trellis-agent` running OpenTofu. The
 * run is a PLAN job (and the DEPLOY of it) like any other: its log streams back into the terminal.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  caRequest,
  checkTestPostgres,
  createTestDatabase,
  requirePeer,
  Terminal,
  type TestCa,
  type TestDatabase,
  testPostgresPoolSize,
} from '@trellis/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AgentProcess,
  type E2eServer,
  eventually,
  killLeftovers,
  startAgent,
  startTlsServer,
  TOFU,
  type TlsE2eServer,
} from '../support/e2e.js';

const OPA = requirePeer('opa', 'policy checks of remote runs');

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

type User = E2eServer['user'];

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe.skipIf(!TOFU || (dialect === 'postgres' && !postgres.available))(
    `remote runs from the stock tofu CLI on ${dialect}`,
    () => {
      let ca: TestCa;
      let database: TestDatabase | null = null;
      let server: TlsE2eServer;
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

      /** The runs of workspace `name`, newest first, as the protocol shows them. */
      const runsOf = async (name: string) => {
        const workspace = (await tfe(`/organizations/${org}/workspaces/${name}`)).json.data;
        return (await tfe(`/workspaces/${workspace.id}/runs`)).json.data as {
          id: string;
          attributes: { status: string; 'is-destroy': boolean };
        }[];
      };
      /** The plan job of a run. */
      const planJobOf = (run: { id: string }) => run.id.replace(/^run-/, '');

      beforeAll(async () => {
        if (dialect === 'postgres') database = await createTestDatabase('postgres');
        server = await startTlsServer({
          CLI_JWT_SECRET: 'remote-runs-e2e-jwt-secret-at-least-32-bytes',
          ...(OPA ? { TRELLIS_OPA_BIN: OPA } : {}),
          ...(database ? { DATABASE_URL: database.url, TRELLIS_DB_POOL_MAX: String(testPostgresPoolSize()) } : {}),
        });
        ({ ca, host, user, url: base } = server);
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
        agent = await startAgent(server, {
          name: `remote-${dialect}`,
          env: { NODE_EXTRA_CA_CERTS: ca.caFile, SSL_CERT_FILE: ca.caFile, ...(OPA ? { TRELLIS_OPA_BIN: OPA } : {}) },
        });
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

      it('tofu apply shows the plan, waits for yes, and the agent applies it', async () => {
        const dir = await workspaceDir('apps');
        const applied = await tofu(dir, ['apply'], 'yes\n');
        expect(applied.code, applied.output).toBe(0);
        expect(applied.output).toContain('Plan: 2 to add, 0 to change, 0 to destroy.');
        expect(applied.output).toContain('Do you want to perform these actions in workspace "apps"?');
        expect(applied.output).toContain('Apply complete! Resources: 2 added, 0 changed, 0 destroyed.');
        const [run] = await runsOf('apps');
        expect(run?.attributes.status).toBe('applied');
        // The state is the vine's, written by the DEPLOY; its outputs are on the vine.
        const history = await user.stateHistory('apps');
        expect(history.versions).toHaveLength(1);
        expect(history.versions[0]?.job_id).not.toBeNull();
        const vine = await user.getConfiguration('apps');
        expect(JSON.stringify(vine)).toContain('"greeting"');
        const pulled = await tofu(dir, ['output', '-raw', 'greeting']);
        expect(pulled.stdout).toBe('hello');
      }, 300_000);

      it('answering no discards the run, and nothing is applied', async () => {
        const dir = await workspaceDir('declined');
        const declined = await tofu(dir, ['apply'], 'no\n');
        expect(declined.code).not.toBe(0);
        expect(declined.output).toMatch(/Apply discarded/);
        const [run] = await runsOf('declined');
        expect(run?.attributes.status).toBe('discarded');
        expect((await user.stateHistory('declined')).versions).toHaveLength(0);
        // A discarded plan is never applied afterwards.
        const again = await tfe(`/runs/${run?.id}/actions/apply`, { method: 'POST', body: {} });
        expect(again.status).toBe(409);
      }, 300_000);

      it('-auto-approve with run variables, -target, -refresh-only and -destroy', async () => {
        const dir = await workspaceDir('options');
        const targeted = await tofu(dir, ['apply', '-auto-approve', '-target=terraform_data.b']);
        expect(targeted.code, targeted.output).toBe(0);
        expect(targeted.output).toContain('Apply complete! Resources: 1 added, 0 changed, 0 destroyed.');
        const withVar = await tofu(dir, ['apply', '-auto-approve', '-var', 'greeting=bonjour']);
        expect(withVar.code, withVar.output).toBe(0);
        expect(withVar.output).toContain('Apply complete! Resources: 1 added');
        expect((await tofu(dir, ['output', '-raw', 'greeting'])).stdout).toBe('bonjour');
        const refreshed = await tofu(dir, ['apply', '-auto-approve', '-refresh-only', '-var', 'greeting=bonjour']);
        expect(refreshed.code, refreshed.output).toBe(0);
        expect(refreshed.output).toMatch(/No changes|Apply complete! Resources: 0 added, 0 changed, 0 destroyed/);
        const destroyed = await tofu(dir, ['apply', '-destroy', '-auto-approve', '-var', 'greeting=bonjour']);
        expect(destroyed.code, destroyed.output).toBe(0);
        expect(destroyed.output).toContain('Apply complete! Resources: 0 added, 0 changed, 2 destroyed.');
        const runs = await runsOf('options');
        expect(runs[0]?.attributes['is-destroy']).toBe(true);
        // Newest first; the refresh-only run found nothing to change, so its plan was all there was.
        expect(runs.map((run) => run.attributes.status)).toEqual([
          'applied',
          'planned_and_finished',
          'applied',
          'applied',
        ]);
      }, 420_000);

      it('an approval-required vine makes the run wait for an approval', async () => {
        const dir = await workspaceDir('approved');
        await user.updateConfiguration('approved', { approval: { required: true } } as never);
        const session = terminal.start(dir, ['apply', '-auto-approve']);
        const run = await eventually(
          'the run to wait for its approval',
          async () => {
            const [latest] = await runsOf('approved');
            return latest?.attributes.status === 'confirmed' ? latest : undefined;
          },
          180_000,
        );
        await user.approvePlan(planJobOf(run), { comment: 'looks right' });
        const result = await session.done;
        expect(result.code, session.output()).toBe(0);
        expect(session.output()).toContain('Apply complete! Resources: 2 added');
      }, 300_000);

      it('Ctrl-C while applying cancels the job gracefully', async () => {
        const dir = await workspaceDir('interrupted', {
          'slow.tf':
            'resource "terraform_data" "slow" {\n  provisioner "local-exec" {\n    command = "sleep 60"\n  }\n}\n',
        });
        const session = terminal.start(dir, ['apply', '-auto-approve']);
        const run = await eventually(
          'the apply to start',
          async () => {
            const [latest] = await runsOf('interrupted');
            return latest?.attributes.status === 'applying' ? latest : undefined;
          },
          180_000,
        );
        // Interrupted only once the CLI streams the apply's log. Before that it polls the run, and
        // OpenTofu's cloud backend loses the run it read when Ctrl-C lands during one of those
        // reads (`r, err = Runs.Read(stopCtx, …)` leaves `r` nil), so it exits without cancelling:
        // a race in the CLI, not something the control plane can answer.
        await eventually(
          'the CLI to stream the apply',
          async () => (session.output().includes('terraform_data.slow: Creating...') ? true : undefined),
          180_000,
        );
        // With -auto-approve the CLI does not ask: it cancels the run it started.
        session.interrupt();
        await session.done;
        const deploy = await eventually(
          'the DEPLOY to end',
          async () => {
            const jobs = await user.listJobs();
            const found = jobs.find((job) => job.plan_job_id === planJobOf(run));
            return found && ['SUCCESS', 'FAILED', 'CANCELLED'].includes(found.status) ? found : undefined;
          },
          120_000,
        );
        // What the CLI printed and what the agent did, should the cancel not have reached the job.
        const story = () => `${session.output()}\n--- agent ---\n${agent.output().slice(-6000)}`;
        expect(deploy.status, story()).toBe('CANCELLED');
        expect((await runsOf('interrupted'))[0]?.attributes.status, story()).toBe('canceled');
      }, 300_000);

      it.skipIf(!OPA)(
        "a failed mandatory policy stops tofu apply with OPA's message; an override lets it through",
        async () => {
          const dir = await workspaceDir('guarded');
          await user.createPolicy({
            name: 'no-forbidden',
            enforcement: 'mandatory',
            module: `package trellis.forbidden

deny contains msg if {
  some rc in input.resource_changes
  rc.type == "terraform_data"
  rc.change.after.input == "forbidden"
  msg := sprintf("%s may not say forbidden", [rc.address])
}
`,
          } as never);
          // A plan cannot be overridden: it stops with OPA's message.
          const planning = terminal.start(dir, ['plan', '-var', 'greeting=forbidden']);
          const timer = setTimeout(() => planning.interrupt(), 90_000);
          const stoppedResult = await planning.done;
          clearTimeout(timer);
          const stopped = { ...stoppedResult, output: planning.output() };
          if (stopped.code === null || stopped.code === 0) {
            const [latest] = await runsOf('guarded');
            const checks = await tfe(`/runs/${latest?.id}/policy-checks`);
            throw new Error(`${stopped.output}\n${JSON.stringify(latest)}\n${checks.text}`);
          }
          expect(stopped.code).not.toBe(0);
          expect(stopped.output).toContain('terraform_data.a may not say forbidden');
          expect(stopped.output).toContain('soft failed');
          // An admin applying is asked, and overrides.
          // The CLI reads each answer when it asks: a person types them one at a time.
          const applying = terminal.start(dir, ['apply', '-var', 'greeting=forbidden']);
          await eventually('the override question', () =>
            applying.output().includes('Do you want to override the soft failed policy check?') ? true : undefined,
          );
          expect(applying.output()).toContain('terraform_data.a may not say forbidden');
          applying.write('override\n');
          await eventually('the apply question', () =>
            applying.output().includes('Do you want to perform these actions') ? true : undefined,
          );
          applying.write('yes\n');
          const asked = { ...(await applying.done), output: applying.output() };
          expect(asked.code, asked.output).toBe(0);
          expect(asked.output).toContain('Apply complete!');
        },
        420_000,
      );

      it('uploads what .terraformignore leaves: a 5 MB directory beside the configuration stays home', async () => {
        const dir = await workspaceDir('ignoring', {
          '.terraformignore': 'big/\n',
          'kept.tf': 'output "kept" {\n  value = file("data/keep.txt")\n}\n',
        });
        mkdirSync(join(dir, 'big'));
        writeFileSync(join(dir, 'big', 'blob.bin'), randomBytes(5 * 1024 * 1024));
        mkdirSync(join(dir, 'data'));
        writeFileSync(join(dir, 'data', 'keep.txt'), 'kept');
        const plan = await tofu(dir, ['plan']);
        expect(plan.code, plan.output).toBe(0);
        expect(plan.output).toMatch(/kept\s+= "kept"/);
        const size = Number(/configuration version \S+ \((\d+) bytes/.exec(plan.output)?.[1]);
        expect(size).toBeGreaterThan(0);
        expect(size).toBeLessThan(64 * 1024);
      }, 300_000);

      it('a workspace with execution mode local still runs on the laptop', async () => {
        const dir = await workspaceDir('laptop');
        const workspace = (await tfe(`/organizations/${org}/workspaces/laptop`)).json.data;
        const patched = await tfe(`/workspaces/${workspace.id}`, {
          method: 'PATCH',
          body: { data: { type: 'workspaces', attributes: { 'execution-mode': 'local' } } },
        });
        expect(patched.status, patched.text).toBe(200);
        const applied = await tofu(dir, ['apply', '-auto-approve']);
        expect(applied.code, applied.output).toBe(0);
        expect(applied.output).not.toContain('Running apply in cloud backend');
        expect(applied.output).toContain('Apply complete! Resources: 2 added');
        expect(await runsOf('laptop')).toEqual([]);
        // Its state is still kept in Trellis.
        expect((await user.stateHistory('laptop')).versions).toHaveLength(1);
      }, 300_000);
    },
  );
}
