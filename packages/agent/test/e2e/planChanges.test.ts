/**
 * A plan's change document end to end (issue 29), with the real agent, the real server and the
 * pinned OpenTofu: a sensitive variable flows into a `terraform_data` input and a sensitive
 * output; the document the agent stores shows the change tree (a module too) with the input and
 * the output masked and the ids known after apply, and the secret appears nowhere: not in the
 * stored object, the API's answer, the CLI's output (tree and `--json`), nor the job page's HTML.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bootstrapSessionCookie, vineyardWithVine } from '@trellis/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AgentProcess,
  BOOTSTRAP_TOKEN,
  type E2eServer,
  killLeftovers,
  logText,
  startAgent,
  startServer,
  TOFU,
  waitForJob,
} from '../support/e2e.js';

const CLI_BIN = fileURLToPath(new URL('../../../cli/dist/bin/trellis.js', import.meta.url));
const SECRET = 'Plan-Review-Secret-9f3a1c77';

const MAIN_TF = `
variable "db_password" {
  type      = string
  sensitive = true
}

resource "terraform_data" "credentials" {
  input = var.db_password
}

resource "terraform_data" "plain" {
  input = { name = "web", ports = [80, 443] }
}

module "net" {
  source = "./net"
}

output "password" {
  value     = var.db_password
  sensitive = true
}

output "plain_id" {
  value = terraform_data.plain.id
}
`;

const NET_TF = `
resource "terraform_data" "subnet" {
  input = "10.0.1.0/24"
}
`;

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe.skipIf(!TOFU)("a plan's change document with real OpenTofu", { timeout: 180_000 }, () => {
  let server: E2eServer;
  let agent: AgentProcess;
  let home: string;

  beforeAll(async () => {
    server = await startServer();
    agent = await startAgent(server, { name: 'reviews' });
    home = mkdtempSync(join(tmpdir(), 'trellis-plan-changes-cli-'));
  });
  afterAll(async () => {
    await agent?.stop();
    killLeftovers();
    await server?.stop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it('masks the sensitive input and output everywhere the document goes', async () => {
    const { vine } = await vineyardWithVine(server.user, 'reviewed', {
      source: { type: 'inline', files: { 'main.tf': MAIN_TF, 'net/main.tf': NET_TF } },
      variables: { db_password: { value: SECRET, sensitive: true } },
      engine: 'tofu',
    });
    const plan = await server.user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
    const planned = await waitForJob(server, plan.id);
    const log = await logText(server, plan.id);
    expect(planned.status, log).toBe('SUCCESS');
    expect(log).toMatch(/plan changes uploaded: 3 resource\(s\), 2 output\(s\), sensitive values masked/);

    // The API's answer: the tree, the sensitive input and output masked, the ids unknown.
    const document = await server.user.getPlanChanges(plan.id);
    expect(JSON.stringify(document)).not.toContain(SECRET);
    expect(document.truncated).toBe(false);
    const byAddress = Object.fromEntries(document.resource_changes.map((change) => [change.address, change]));
    expect(Object.keys(byAddress).sort()).toEqual([
      'module.net.terraform_data.subnet',
      'terraform_data.credentials',
      'terraform_data.plain',
    ]);
    expect(byAddress['module.net.terraform_data.subnet']).toMatchObject({
      module_address: 'module.net',
      type: 'terraform_data',
      name: 'subnet',
      actions: ['create'],
    });
    const credentials = byAddress['terraform_data.credentials'];
    expect(credentials?.module_address).toBeNull();
    expect(credentials?.attributes).toEqual(
      expect.arrayContaining([
        { path: 'input', after: { sensitive: true } },
        { path: 'id', after: { unknown: true } },
        { path: 'output', after: { unknown: true } },
      ]),
    );
    expect(byAddress['terraform_data.plain']?.attributes).toEqual(
      expect.arrayContaining([
        { path: 'input.name', after: { value: 'web' } },
        { path: 'input.ports[0]', after: { value: 80 } },
        { path: 'input.ports[1]', after: { value: 443 } },
      ]),
    );
    const outputs = Object.fromEntries(document.output_changes.map((output) => [output.name, output]));
    expect(outputs.password?.attributes).toEqual([{ path: 'password', after: { sensitive: true } }]);
    expect(outputs.plain_id?.attributes).toEqual([{ path: 'plain_id', after: { unknown: true } }]);

    // The stored object, beside the plan file in the artifact store (the filesystem store's `<key>.artifact`).
    const planDir = filesUnder(server.dataDir).filter((path) => path.includes(join(plan.id, '')));
    expect(planDir.some((path) => path.endsWith(join(plan.id, 'terraform.plan.out.artifact')))).toBe(true);
    const stored = planDir.filter((path) => path.endsWith(join(plan.id, 'changes.json.artifact')));
    expect(stored).toHaveLength(1);
    const storedText = readFileSync(stored[0] as string, 'utf8');
    expect(storedText).toContain('terraform_data.credentials');
    expect(storedText).not.toContain(SECRET);

    // The CLI: the tree and the document.
    const env = {
      ...process.env,
      HOME: home,
      XDG_CONFIG_HOME: join(home, '.config'),
      NO_COLOR: '1',
      TRELLIS_SERVER: server.url,
      TRELLIS_TOKEN: server.user.token,
    };
    const tree = spawnSync(process.execPath, [CLI_BIN, 'jobs', 'changes', plan.id], { env, encoding: 'utf8' });
    expect(tree.status, tree.stderr).toBe(0);
    expect(tree.stdout).toContain('3 to create, 0 to update, 0 to replace, 0 to destroy');
    expect(tree.stdout).toContain('+   terraform_data.credentials (create)');
    expect(tree.stdout).toContain('+ input = (sensitive)');
    expect(tree.stdout).toContain('+ id = (known after apply)');
    expect(tree.stdout).toContain('  module.net\n    +   module.net.terraform_data.subnet (create)');
    expect(tree.stdout).toContain('+ password = (sensitive)');
    expect(tree.stdout + tree.stderr).not.toContain(SECRET);
    const json = spawnSync(process.execPath, [CLI_BIN, 'jobs', 'changes', plan.id, '--json'], {
      env,
      encoding: 'utf8',
    });
    expect(json.status, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(document);
    expect(json.stdout).not.toContain(SECRET);

    // The job page's HTML.
    const cookie = await bootstrapSessionCookie(server.url, BOOTSTRAP_TOKEN);
    const page = await fetch(`${server.url}/jobs/${plan.id}`, { headers: { cookie } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('data-plan-changes');
    expect(html).toContain('data-resource-change="module.net.terraform_data.subnet"');
    expect(html).toContain('(sensitive)');
    expect(html).not.toContain(SECRET);

    // Applied, then changed: an update in place, a replacement (the secret unchanged, still hidden) and a destroy.
    const deployed = await waitForJob(
      server,
      (await server.user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id, plan_job_id: plan.id })).id,
    );
    expect(deployed.status, await logText(server, deployed.id)).toBe('SUCCESS');
    const changedTf = MAIN_TF.replace('var.db_password\n}', 'var.db_password\n  triggers_replace = "v2"\n}')
      .replace('ports = [80, 443]', 'ports = [80, 8443]')
      .replace(/module "net" \{[^}]*\}/, '');
    await server.user.updateConfiguration(vine.id, { source: { type: 'inline', files: { 'main.tf': changedTf } } });
    const second = await waitForJob(
      server,
      (await server.user.createJob({ job_type: 'PLAN', configuration_id: vine.id })).id,
    );
    expect(second.status, await logText(server, second.id)).toBe('SUCCESS');
    const changed = await server.user.getPlanChanges(second.id);
    expect(JSON.stringify(changed)).not.toContain(SECRET);
    const after = Object.fromEntries(changed.resource_changes.map((change) => [change.address, change]));
    expect(after['terraform_data.plain']?.actions).toEqual(['update']);
    expect(after['terraform_data.plain']?.attributes).toEqual(
      expect.arrayContaining([{ path: 'input.ports[1]', before: { value: 443 }, after: { value: 8443 } }]),
    );
    expect(after['terraform_data.credentials']?.actions).toEqual(['delete', 'create']);
    expect(after['terraform_data.credentials']?.attributes).toEqual(
      expect.arrayContaining([
        { path: 'triggers_replace', after: { value: 'v2' }, forces_replacement: true },
        { path: 'id', before: { value: expect.any(String) }, after: { unknown: true } },
      ]),
    );
    // The sensitive input is the same on both sides: counted as unchanged, never shown.
    expect(after['terraform_data.credentials']?.attributes.map((attribute) => attribute.path)).not.toContain('input');
    expect(after['module.net.terraform_data.subnet']).toMatchObject({
      actions: ['delete'],
      attributes: expect.arrayContaining([{ path: 'input', before: { value: '10.0.1.0/24' } }]),
    });
    const secondTree = spawnSync(process.execPath, [CLI_BIN, 'jobs', 'changes', second.id], { env, encoding: 'utf8' });
    expect(secondTree.status, secondTree.stderr).toBe(0);
    expect(secondTree.stdout).toContain('0 to create, 1 to update, 1 to replace, 1 to destroy');
    expect(secondTree.stdout).toContain('-/+ terraform_data.credentials (replace');
    expect(secondTree.stdout).not.toContain(SECRET);
  });
});
