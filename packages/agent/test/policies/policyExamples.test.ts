/**
 * The three example policies of docs/policies.md, taken from the page and evaluated with the real
 * OPA engine through the agent's own evaluation: the first two on a plan of AWS resources in the
 * `tofu show -json` format, the third on a real OpenTofu plan that replaces one resource and
 * destroys another. Also: the evaluation's input files are owner-only and a module that does not
 * compile fails its policy with the engine's message.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { JsonObject, PolicyToEvaluate } from '@trellis/core';
import { requirePeer } from '@trellis/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { parseJsonOutput } from '../../src/engine/Engine.js';
import { evaluatePolicies } from '../../src/policy/evaluatePolicies.js';

const OPA = requirePeer('opa', 'the example policies of docs/policies.md');
const TOFU = requirePeer('tofu', 'the example policies of docs/policies.md');
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const AWS_PLAN: unknown = JSON.parse(readFileSync(join(ROOT, 'test-fixtures/policies/aws.plan.json'), 'utf8'));

/** The Rego block after `<!-- policy: name -->` in docs/policies.md. */
function example(name: string): string {
  const page = readFileSync(join(ROOT, 'docs/policies.md'), 'utf8');
  const match = new RegExp(`<!-- policy: ${name} -->\\n\`\`\`rego\\n([\\s\\S]*?)\`\`\``).exec(page);
  if (!match?.[1]) throw new Error(`docs/policies.md has no example policy ${name}`);
  return match[1];
}

function policy(name: string, module: string): PolicyToEvaluate {
  return { id: randomUUID(), version: 1, name, enforcement: 'mandatory', module };
}

const dirs: string[] = [];
function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function trellisInput(vineyard: string): JsonObject {
  return {
    vine: { id: 'v', name: 'web', project_name: 'web' },
    vineyard: { id: 'y', name: vineyard },
    job: { id: 'j', job_type: 'PLAN', trigger: { type: 'manual' } },
  };
}

async function evaluate(plan: unknown, modules: PolicyToEvaluate[], vineyard = 'staging') {
  const dir = join(tempDir('trellis-policy-eval-'), 'policies');
  return {
    dir,
    results: await evaluatePolicies({
      bin: OPA as string,
      dir,
      plan,
      trellis: trellisInput(vineyard),
      policies: modules,
    }),
  };
}

describe.skipIf(!OPA)('the example policies of docs/policies.md, with OPA', () => {
  it('no public S3 bucket: a public ACL and a public access block that lets policies through', async () => {
    const { results } = await evaluate(AWS_PLAN, [policy('no-public-buckets', example('no-public-buckets'))]);
    expect(results).toHaveLength(1);
    expect(results[0]?.passed).toBe(false);
    expect([...(results[0]?.messages ?? [])].sort()).toEqual([
      'aws_s3_bucket_acl.logs: ACL "public-read" makes the bucket public',
      'aws_s3_bucket_public_access_block.assets: block_public_policy must be true',
    ]);
  });

  it('instance types: the instances created or changed outside the allow-list, not those destroyed', async () => {
    const { results } = await evaluate(AWS_PLAN, [policy('instance-types', example('instance-types'))]);
    expect(results[0]).toMatchObject({
      passed: false,
      messages: [
        'aws_instance.web: instance type m5.4xlarge is not in the allow-list (m6i.large, t3.medium, t3.micro, t3.small)',
      ],
    });
  });

  it('a plan without such changes passes both', async () => {
    const clean = {
      ...(AWS_PLAN as JsonObject),
      resource_changes: (AWS_PLAN as { resource_changes: { address: string }[] }).resource_changes.filter(
        (rc) =>
          !['aws_s3_bucket_acl.logs', 'aws_s3_bucket_public_access_block.assets', 'aws_instance.web'].includes(
            rc.address,
          ),
      ),
    };
    const { results } = await evaluate(clean, [
      policy('no-public-buckets', example('no-public-buckets')),
      policy('instance-types', example('instance-types')),
    ]);
    expect(results.map((r) => [r.name, r.passed, r.messages])).toEqual([
      ['no-public-buckets', true, []],
      ['instance-types', true, []],
    ]);
  });

  it('keeps the input and modules owner-only, and fails a module that does not compile with the message', async () => {
    const { dir, results } = await evaluate(AWS_PLAN, [
      policy('unsafe', 'package unsafe\n\ndeny contains msg if { msg := y }\n'),
      policy('instance-types', example('instance-types')),
    ]);
    expect(results[0]).toMatchObject({ name: 'unsafe', passed: false });
    expect(results[0]?.messages[0]).toContain('rego_unsafe_var_error: var y is unsafe');
    expect(results[1]).toMatchObject({ name: 'instance-types', passed: false });
    const files = readdirSync(dir).sort();
    expect(files).toEqual(['input.json', 'policy-1.rego', 'policy-2.rego']);
    for (const file of files) expect(statSync(join(dir, file)).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(join(dir, 'input.json'), 'utf8')).trellis.vineyard.name).toBe('staging');
  });
});

describe.skipIf(!OPA || !TOFU)('no destroy in production, on a real OpenTofu plan', { timeout: 120_000 }, () => {
  it('denies the replacement and the destruction in a production vineyard, and nothing in staging', async () => {
    const dir = tempDir('trellis-policy-tofu-');
    const env = { ...process.env, HOME: dir, TF_IN_AUTOMATION: '1', TF_CLI_CONFIG_FILE: join(dir, 'none.tfrc') };
    writeFileSync(join(dir, 'none.tfrc'), '');
    const tofu = (...args: string[]) =>
      execFileSync(TOFU as string, [...args, '-no-color'], {
        cwd: dir,
        env,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    writeFileSync(
      join(dir, 'main.tf'),
      'resource "terraform_data" "keep" {\n  input = "a"\n}\n\nresource "terraform_data" "rotated" {\n  triggers_replace = ["v1"]\n}\n\nresource "terraform_data" "old" {\n  input = "x"\n}\n',
    );
    tofu('init', '-input=false');
    tofu('apply', '-auto-approve', '-input=false');
    writeFileSync(
      join(dir, 'main.tf'),
      'resource "terraform_data" "keep" {\n  input = "a"\n}\n\nresource "terraform_data" "rotated" {\n  triggers_replace = ["v2"]\n}\n',
    );
    tofu('plan', '-input=false', '-out=plan.out');
    const plan = parseJsonOutput(tofu('show', '-json', 'plan.out'));

    const module = example('no-destroy-in-production');
    const production = await evaluate(plan, [policy('no-destroy-in-production', module)], 'production');
    expect(production.results[0]?.passed).toBe(false);
    expect([...(production.results[0]?.messages ?? [])].sort()).toEqual([
      'terraform_data.old would be destroyed in vineyard production',
      'terraform_data.rotated would be replaced in vineyard production',
    ]);
    const staging = await evaluate(plan, [policy('no-destroy-in-production', module)], 'staging');
    expect(staging.results[0]).toMatchObject({ passed: true, messages: [] });
  });
});

describe.skipIf(!OPA)('the size of policy results', () => {
  it('keeps at most 50 messages of at most 1000 characters per policy', async () => {
    const many = {
      resource_changes: Array.from({ length: 120 }, (_, i) => ({
        address: `terraform_data.n${i}`,
        type: 'terraform_data',
        change: { actions: ['create'], after: { input: 'x'.repeat(3000) } },
      })),
    };
    const module =
      'package big\n\ndeny contains msg if {\n  some rc in input.resource_changes\n  msg := sprintf("%s %s", [rc.address, rc.change.after.input])\n}\n';
    const { results } = await evaluate(many, [policy('big', module)]);
    const messages = results[0]?.messages ?? [];
    expect(messages).toHaveLength(50);
    expect(messages.at(-1)).toBe('… and 71 more');
    expect(messages.slice(0, 49).every((m) => m.length === 1000 && m.endsWith('…'))).toBe(true);
  });
});
