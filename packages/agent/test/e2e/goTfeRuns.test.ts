/**
 * go-tfe's own integration tests of runs, plans and applies (the version OpenTofu v1.12.6 pins,
 * built by `scripts/peers.sh go-tfe`) against a real `trellis-server` over TLS, with real
 * `trellis-agent`s running OpenTofu. go-tfe makes a new organization for almost every test; an
 * organization's jobs run only on its own agents, so this test registers and starts one for each
 * organization as it appears (as its owner, the person behind the token, would) and stops it when
 * the organization is deleted. The fixture's `null_resource` comes from the tiny provider of
 * scripts/test-provider, installed by the agents' OpenTofu from a filesystem mirror: the closed
 * network has no registry.
 */
import { execFile } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { goTfeSource, requirePeer } from '@trellis/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AgentProcess,
  type E2eServer,
  killLeftovers,
  startAgent,
  startTlsServer,
  TOFU,
  type TlsE2eServer,
} from '../support/e2e.js';

const run = promisify(execFile);
const TESTS = requirePeer('go-tfe.test', "go-tfe's run tests");
const PROVIDER = requirePeer('terraform-provider-null', "go-tfe's run tests");
const SOURCE = goTfeSource();
const present = TESTS !== null && PROVIDER !== null && TOFU !== null;

/** The go-tfe run tests docs/terraform-cloud.md says pass against Trellis. */
export const PASSING_RUNS = [
  'TestAppliesLogs_RunDependent',
  'TestAppliesRead_RunDependent',
  'TestApplies_Unmarshal',
  'TestPlan_Unmarshal',
  'TestPlansLogs_RunDependent',
  'TestPlansRead_RunDependent',
  'TestPolicyCheck_Unmarshal',
  'TestRunCreateOptions_Marshal',
  'TestRun_Unmarshal',
  'TestRunsConfirmedBy_RunDependent',
  'TestRunsDiscard_RunDependent',
  'TestRunsList_RunDependent',
];

/**
 * The go-tfe tests of what Trellis serves around runs (runs, plans, applies, policy checks, run
 * events, the queue, and the workspace and state tests that need a run); `TRELLIS_GO_TFE_RUNS=all`
 * runs each of them and prints the outcomes (docs/terraform-cloud.md lists them).
 */
const RUN_TESTS =
  '^(TestRuns(List|ListQueryParams|Create|ReadWithOptions|ConfirmedBy|CanceledAt|Apply|Cancel|ForceCancel|Discard|ListForOrganization)_RunDependent' +
  '|TestRunsRunEvents|TestRunsTriggerReason|TestRun_Unmarshal|TestRunCreateOptions_Marshal|TestRunEvents(List|Read)_RunDependent' +
  '|TestPlans(Read|Logs)_RunDependent|TestPlan_Unmarshal|TestApplies(Read|Logs)_RunDependent|TestApplies_Unmarshal' +
  '|TestPolicyChecks(List|Read|Override|Logs)_RunDependent|TestPolicyCheck_Unmarshal' +
  '|TestOrganizationsRead(Capacity|RunQueue)_RunDependent|TestStateVersionsList|TestStateVersionsCreate_RunDependent' +
  '|TestStateVersionsCurrentWithOptions|TestWorkspaces(List|ReadWithHistory|Unlock)_RunDependent)$';

type Outcome = 'PASS' | 'FAIL' | 'SKIP';

/** A CLI configuration that installs hashicorp/null from a filesystem mirror holding the test provider. */
function providerMirror(dir: string): string {
  for (const host of ['registry.opentofu.org', 'registry.terraform.io']) {
    const platform = join(dir, 'mirror', host, 'hashicorp', 'null', '3.2.4', 'linux_amd64');
    mkdirSync(platform, { recursive: true });
    copyFileSync(PROVIDER as string, join(platform, 'terraform-provider-null_v3.2.4'));
    chmodSync(join(platform, 'terraform-provider-null_v3.2.4'), 0o755);
  }
  const file = join(dir, 'agent.tfrc');
  writeFileSync(file, `provider_installation {\n  filesystem_mirror {\n    path = "${join(dir, 'mirror')}"\n  }\n}\n`);
  return file;
}

describe.skipIf(!present)("go-tfe's run tests against trellis-server and trellis-agents", () => {
  let server: TlsE2eServer;
  let user: E2eServer['user'];
  let token: string;
  let cliConfig: string;
  const dirs: string[] = [];
  /** The agent of each organization go-tfe made, by organization id. */
  const agents = new Map<string, Promise<AgentProcess>>();
  let watching = true;
  let watcher: Promise<void> = Promise.resolve();

  /** Starts an agent for each new organization and stops those of deleted ones, until the end. */
  async function watchOrganizations(): Promise<void> {
    while (watching) {
      const orgs = await user.listOrgs().catch(() => null);
      if (orgs) {
        const live = new Set(orgs.map((org) => org.id));
        for (const org of orgs) {
          if (agents.has(org.id)) continue;
          const credentials = user
            .registerAgent({ name: `go-tfe-${org.name}`.slice(0, 60), org_id: org.id })
            .then((answer) => ({ workerId: answer.worker_id, workerToken: answer.worker_token }));
          const started = credentials.then((registered) =>
            startAgent(server, {
              credentials: registered,
              env: {
                NODE_EXTRA_CA_CERTS: server.ca.caFile,
                SSL_CERT_FILE: server.ca.caFile,
                TF_CLI_CONFIG_FILE: cliConfig,
              },
            }),
          );
          // go-tfe may delete the organization between the list and the registration (404
          // org_not_found): no agent to stop then. Handled now, not 300 ms later when the next
          // list drops it, or the rejection is unhandled meanwhile.
          started.catch(() => undefined);
          agents.set(org.id, started);
        }
        for (const [id, agent] of agents) {
          if (!live.has(id)) {
            agents.delete(id);
            void agent.then((started) => started.stop()).catch(() => undefined);
          }
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
  }

  beforeAll(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'trellis-go-tfe-runs-'));
    dirs.push(dataDir);
    cliConfig = providerMirror(dataDir);
    server = await startTlsServer({
      CLI_JWT_SECRET: 'go-tfe-runs-e2e-jwt-secret-at-least-32-bytes',
      // go-tfe's tests make hundreds of requests in a few seconds.
      TRELLIS_TFE_AUTH_FAILURE_LIMIT: '100000',
    });
    user = server.user;
    token = (await user.createToken({ name: 'go-tfe-runs' })).token;
    watcher = watchOrganizations();
  }, 180_000);

  afterAll(async () => {
    watching = false;
    await watcher;
    for (const agent of agents.values()) await (await agent.catch(() => null))?.stop();
    killLeftovers();
    await server?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('passes the run tests the documentation lists as passing', async () => {
    const env = {
      ...process.env,
      TFE_ADDRESS: server.url,
      TFE_TOKEN: token,
      SSL_CERT_FILE: server.ca.caFile,
      ENABLE_TFE: '1',
    };
    const listed = await run(TESTS as string, ['-test.list', RUN_TESTS], { cwd: SOURCE, env });
    const names = listed.stdout.split('\n').filter((name) => /^Test\w+$/.test(name));
    expect(PASSING_RUNS.filter((name) => !names.includes(name))).toEqual([]);
    const only = process.env.TRELLIS_GO_TFE_RUNS === 'all' ? names : PASSING_RUNS;
    const outcomes: Record<string, Outcome> = {};
    const outputs: Record<string, string> = {};
    for (const name of only) {
      const result = await run(TESTS as string, ['-test.run', `^${name}$`, '-test.v', '-test.timeout', '180s'], {
        cwd: SOURCE,
        env,
        maxBuffer: 64 * 1024 * 1024,
      }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
      const line = new RegExp(`^--- (PASS|FAIL|SKIP): ${name} `, 'm').exec(result.stdout);
      outcomes[name] = (line?.[1] as Outcome | undefined) ?? 'FAIL';
      if (outcomes[name] === 'FAIL') outputs[name] = result.stdout.slice(-4000);
    }
    process.stdout.write(`go-tfe run outcomes: ${JSON.stringify(outcomes, null, 1)}\n`);
    const failing = PASSING_RUNS.filter((name) => outcomes[name] !== 'PASS');
    expect(failing, JSON.stringify(outputs, null, 1)).toEqual([]);
  }, 1_500_000);
});
