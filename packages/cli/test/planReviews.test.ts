/**
 * `trellis approve`, `reject`, `override`, `configs set --require-approval`, the approval and
 * override in `jobs show`, and what `trellis deploy` says at the gate: real binary, real server.
 */
import type { TrellisClient } from '@trellis/client';
import type { Job, VineView } from '@trellis/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeAgent, login, runTrellis, TempHome, TestServer, userClient } from './harness.js';

let server: TestServer;
let home: TempHome;
let agent: TrellisClient;
let client: TrellisClient;

const FAILED = {
  policy_id: '00000000-0000-4000-8000-00000000a001',
  version: 1,
  name: 'no-public-buckets',
  enforcement: 'mandatory',
  passed: false,
  messages: ['aws_s3_bucket.logs must not be public'],
};

beforeAll(async () => {
  server = await new TestServer().start();
  home = new TempHome();
  await login(server, home);
  agent = await fakeAgent(server, home);
  client = userClient(server, home);
});
afterAll(async () => {
  await server?.destroy();
  home?.remove();
});

const run = (...args: string[]) => runTrellis(args, { env: home.env() });

async function trellis(...args: string[]) {
  const result = await run(...args);
  if (result.code !== 0) throw new Error(`trellis ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result;
}

/** A PLAN of `vineId` run to SUCCESS by the fake agent, with its artifact and `metadata`. */
async function plan(vineId: string, metadata: Record<string, unknown> = {}): Promise<string> {
  const job = await client.createJob({ job_type: 'PLAN', configuration_id: vineId });
  const claimed = await agent.claimJob();
  expect(claimed?.job.id).toBe(job.id);
  const bytes = new TextEncoder().encode('plan');
  await agent.uploadPlanArtifact(job.id, bytes, bytes.byteLength);
  await agent.reportStatus(job.id, {
    status: 'SUCCESS',
    execution_metadata: { plan_summary: { add: 1, change: 0, destroy: 0 }, ...metadata },
  });
  return job.id;
}

describe('approvals and overrides in the CLI', () => {
  it('sets the approval, stops at the gate with a clear message, overrides, approves and deploys', async () => {
    const vineyard = await client.createVineyard('reviews-cli');
    const source = { type: 'inline' as const, files: { 'main.tf': 'output "x" { value = 1 }\n' } };
    const web = await client.createConfiguration({ name: 'web', vineyard_id: vineyard.id, source });

    const set = await trellis('configs', 'set', 'web', '--require-approval', '--separate-approver');
    expect(set.stdout).toMatch(/Approval: +required before deploy, by someone other than the planner\n/);
    const lonely = await run('configs', 'set', 'web', '--separate-approver');
    expect(lonely.code).toBe(2);

    const planId = await plan(web.id, { policy_results: [FAILED] });
    const blocked = await run('deploy', 'web', '--plan', planId, '--detach');
    expect(blocked.code).toBe(1);
    expect(blocked.stderr).toContain('the plan failed a mandatory policy [policy_failed]:');
    expect(blocked.stderr).toContain('no-public-buckets: aws_s3_bucket.logs must not be public');
    expect(blocked.stderr).toContain(`\`trellis override ${planId} --reason "..."\``);
    expect(blocked.stderr).not.toContain('PLAN-JOB');

    const noReason = await run('override', planId);
    expect(noReason.code).toBe(2);
    const overridden = JSON.parse(
      (await trellis('override', planId, '--reason', 'public by design', '--json')).stdout,
    ) as Job;
    expect(overridden.policy_override).toMatchObject({ reason: 'public by design' });

    const unapproved = await run('deploy', 'web', '--plan', planId, '--detach');
    expect(unapproved.code).toBe(1);
    expect(unapproved.stderr).toContain('[approval_required]');
    // The advice names the real plan and configuration, never a placeholder.
    expect(unapproved.stderr).toContain(
      `approve the plan with \`trellis approve ${planId}\`, then \`trellis deploy web --plan ${planId}\``,
    );
    expect(unapproved.stderr).not.toMatch(/PLAN-JOB|CONFIG/);
    // Without a plan (issue 23): refused, naming what to run first.
    const planless = await run('deploy', 'web', '--detach');
    expect(planless.code).toBe(1);
    expect(planless.stderr).toContain('[plan_required]');
    expect(planless.stderr).toContain(
      'plan first: `trellis plan web`, then deploy that plan: `trellis deploy web --plan` with its job id',
    );
    expect(planless.stderr).not.toMatch(/PLAN-JOB|CONFIG/);
    const destroyless = await run('destroy', 'web', '--yes', '--detach');
    expect(destroyless.code).toBe(1);
    expect(destroyless.stderr).toContain('[plan_required]');
    expect(destroyless.stderr).toContain('`trellis plan web --destroy`');
    expect(destroyless.stderr).not.toMatch(/PLAN-JOB|CONFIG/);
    const destroyPlanId = (await trellis('plan', 'web', '--destroy', '--detach')).stdout.trim();
    expect((await client.getJob(destroyPlanId)).config_snapshot.destroy).toBe(true);
    await client.cancelJob(destroyPlanId);

    expect((await trellis('jobs', 'show', planId)).stdout).toMatch(
      /Deployable: +no: this configuration deploys only an approved plan, and this plan is not approved \[approval_required\]\n/,
    );
    // The person who queued the plan is its only possible approver here: refused, then allowed.
    const self = await run('approve', planId);
    expect(self.code).toBe(1);
    expect(self.stderr).toContain('[separate_approver_required]');
    const relaxed = JSON.parse((await trellis('configs', 'set', 'web', '--require-approval', '--json')).stdout);
    expect(relaxed.approval).toEqual({ required: true, separate_approver: false });
    const approved = await trellis('approve', planId, '--comment', 'reviewed');
    expect(approved.stdout + approved.stderr).toMatch(/approved by admin@localhost at .+ UTC \(reviewed\)/);
    const twice = await run('approve', planId, '--json');
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain('[plan_already_decided]');

    const shown = (await trellis('jobs', 'show', planId)).stdout;
    expect(shown).toMatch(new RegExp(`Deployable: +yes: trellis deploy web --plan ${planId}\n`));
    expect(shown).toMatch(/Approval: +approved by admin@localhost at .+ UTC \(reviewed\)\n/);
    expect(shown).toMatch(/Override: +by admin@localhost at .+ UTC: public by design\n/);
    const shownJson = JSON.parse((await trellis('jobs', 'show', planId, '--json')).stdout) as Job;
    expect(shownJson.approval).toMatchObject({ decision: 'approved', comment: 'reviewed' });

    const deployed = await trellis('deploy', 'web', '--plan', planId, '--detach');
    expect(deployed.stdout).toMatch(/[0-9a-f-]{36}/);
    const deployId = /([0-9a-f-]{36})/.exec(deployed.stdout)?.[1] as string;
    await client.cancelJob(deployId);
  });

  it('rejects a plan (a comment is required), which the deploy then refuses', async () => {
    const vineyard = await client.createVineyard('reviews-reject');
    const source = { type: 'inline' as const, files: { 'main.tf': 'output "y" { value = 2 }\n' } };
    const api = await client.createConfiguration({ name: 'api', vineyard_id: vineyard.id, source });
    const planId = await plan(api.id);
    expect((await run('reject', planId)).code).toBe(2);
    const rejected = JSON.parse((await trellis('reject', planId, '--comment', 'wrong region', '--json')).stdout) as Job;
    expect(rejected.approval).toMatchObject({ decision: 'rejected', comment: 'wrong region' });
    const refused = await run('deploy', 'api', '--plan', planId, '--detach');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('[plan_rejected]');
    expect(refused.stderr).toContain('queue a new plan with `trellis plan api`');
    expect((await trellis('jobs', 'show', planId)).stdout).toMatch(
      /Approval: +rejected by admin@localhost .+\(wrong region\)\n/,
    );

    const off = JSON.parse(
      (await trellis('configs', 'set', 'api', '--no-require-approval', '--json')).stdout,
    ) as VineView;
    expect(off.approval).toBeNull();
  });
});
