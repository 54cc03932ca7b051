/**
 * The deploy gate (issue 23) through the real control plane over HTTP on SQLite and Postgres, with
 * two people signed in through the GitHub sign-in against a stand-in on loopback and a real worker
 * token of their organization's pool: a DEPLOY without a plan where a mandatory policy or an
 * approval applies is refused `plan_required`; a DESTROY of an approval-required vine needs an
 * approved destroy plan; the policy versions a claim carried are recorded, and a plan reported
 * without a result of each is `policy_unchecked`; and the person whose push or deploy queued a
 * plan is its creator for the separate approver, in the API and in the plan's `actions`.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { TrellisApiError, TrellisClient } from '@trellis/client';
import { joinOrg } from '@trellis/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningControlPlane, startControlPlane } from './support/controlPlane.js';
import { describeEachDialect } from './support/dialects.js';
import { type GitHubStandIn, signInWithGitHub, startGitHubStandIn } from './support/gitHubStandIn.js';

const REPOSITORY = 'acme-platform/infra-live';
const PUSH = JSON.parse(
  readFileSync(new URL('../../../test-fixtures/vcs/github/push.json', import.meta.url), 'utf8'),
) as Record<string, unknown>;
const POLICY = 'package trellis.gate\n\ndeny contains msg if {\n  false\n  msg := "never"\n}\n';
const SOURCE = { type: 'inline' as const, files: { 'main.tf': 'terraform {}\n' } };

async function outcome(call: () => Promise<unknown>): Promise<string> {
  try {
    await call();
    return 'ok';
  } catch (error) {
    if (error instanceof TrellisApiError) return `${error.status} ${error.code}`;
    throw error;
  }
}

describeEachDialect('the deploy gate over HTTP', (dialect) => {
  let github: GitHubStandIn;
  let plane: RunningControlPlane;
  let ada: TrellisClient;
  let bob: TrellisClient;
  let pool: TrellisClient;
  let orgId: string;
  let vineyardId: string;

  /** The pool claims `jobId`, uploads a plan for a PLAN, and reports success with `metadata`. */
  async function succeed(jobId: string, metadata: Record<string, unknown> = {}) {
    const claimed = await pool.claimJob();
    expect(claimed?.job.id).toBe(jobId);
    if (claimed?.job.job_type === 'PLAN') {
      const plan = new TextEncoder().encode('a plan');
      await pool.uploadPlanArtifact(jobId, plan, plan.length);
    }
    await pool.reportStatus(jobId, {
      status: 'SUCCESS',
      execution_metadata: { plan_summary: { add: 1, change: 0, destroy: 0 }, ...metadata },
    });
    return claimed;
  }

  const vine = (name: string, more: Record<string, unknown> = {}) =>
    ada.createConfiguration({ name, vineyard_id: vineyardId, source: SOURCE, ...more });

  beforeAll(async () => {
    github = await startGitHubStandIn();
    const adaAtGitHub = github.addPerson('ada-lovelace', 41001, [REPOSITORY]);
    const bobAtGitHub = github.addPerson('bob-bernal', 41002);
    plane = await startControlPlane(dialect, { env: github.env, register: { vcs: github.vcs } });
    const web = plane.controlPlane.config.webUrl;
    ada = await signInWithGitHub(web, adaAtGitHub);
    bob = await signInWithGitHub(web, bobAtGitHub);
    const org = await ada.createOrg(`gate-${dialect}`);
    orgId = org.id;
    await joinOrg(ada, bob, orgId, bobAtGitHub.email as string, 'operator');
    vineyardId = (await ada.createVineyard('production', { orgId })).id;
    const registration = await ada.registerWorker({ name: 'pool', orgId });
    pool = new TrellisClient({
      baseUrl: plane.url,
      auth: { kind: 'worker', workerId: registration.worker_id, workerToken: registration.worker_token },
    });
    await pool.heartbeat('1.0.0');
  }, 60_000);
  afterAll(async () => {
    await plane?.close();
    await github?.stop();
  });

  async function deliverPush(url: string, secret: string, after: string, senderId: number) {
    const head = { ...(PUSH.head_commit as Record<string, unknown>), id: after };
    const body = Buffer.from(
      JSON.stringify({
        ...PUSH,
        before: '1'.repeat(40),
        after,
        head_commit: head,
        commits: [head],
        sender: { login: 'someone', id: senderId, type: 'User' },
      }),
    );
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'push',
        'x-github-delivery': randomUUID(),
        'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
      },
      body,
    });
    expect(response.status).toBe(202);
    return ((await response.json()) as { jobs: string[] }).jobs;
  }

  it('refuses a DEPLOY without a plan where a mandatory policy or an approval applies (409 plan_required)', async () => {
    const free = await vine('free');
    const approved = await vine('approved', { approval: { required: true, separate_approver: false } });
    expect(await outcome(() => bob.createJob({ job_type: 'DEPLOY', configuration_id: free.id }))).toBe('ok');
    const refused = await bob
      .createJob({ job_type: 'DEPLOY', configuration_id: approved.id })
      .catch((error: unknown) => error as TrellisApiError);
    expect(refused).toMatchObject({ status: 409, code: 'plan_required' });
    expect((refused as TrellisApiError).detail).toContain('plan first: `trellis plan approved`');

    // A mandatory policy of the vineyard: a plain DEPLOY of any of its vines is refused too.
    const other = await ada.createVineyard('guarded', { orgId });
    const guarded = await ada.createConfiguration({ name: 'guarded', vineyard_id: other.id, source: SOURCE });
    await ada.createPolicy({
      name: 'gate',
      enforcement: 'mandatory',
      module: POLICY,
      org_id: orgId,
      vineyard_id: other.id,
    });
    expect(await outcome(() => bob.createJob({ job_type: 'DEPLOY', configuration_id: guarded.id }))).toBe(
      '409 plan_required',
    );
    // The queued DEPLOY of the free vine runs; nothing else was queued.
    const claimed = await pool.claimJob();
    expect(claimed?.job).toMatchObject({ job_type: 'DEPLOY', vine_id: free.id });
    await pool.reportStatus(claimed?.job.id as string, { status: 'SUCCESS' });
  });

  it('records the policy versions a claim carried; a plan without a result of each is policy_unchecked', async () => {
    const checkedYard = await ada.createVineyard('checked', { orgId });
    const target = await ada.createConfiguration({ name: 'checked', vineyard_id: checkedYard.id, source: SOURCE });
    const policy = await ada.createPolicy({
      name: 'gate',
      enforcement: 'mandatory',
      module: POLICY,
      org_id: orgId,
      vineyard_id: checkedYard.id,
    });
    const unchecked = await bob.createJob({ job_type: 'PLAN', configuration_id: target.id });
    const claim = await succeed(unchecked.id);
    expect(claim?.policies.map((carried) => carried.id)).toEqual([policy.id]);
    const stored = await bob.getJob(unchecked.id);
    expect(stored.claimed_policies).toEqual([
      { policy_id: policy.id, version: 1, name: 'gate', enforcement: 'mandatory' },
    ]);
    expect(stored.actions?.apply).toMatchObject({ allowed: false, code: 'policy_unchecked' });
    const refused = await bob
      .createJob({ job_type: 'DEPLOY', configuration_id: target.id, plan_job_id: unchecked.id })
      .catch((error: unknown) => error as TrellisApiError);
    expect(refused).toMatchObject({ status: 409, code: 'policy_unchecked' });
    expect((refused as TrellisApiError).detail).toContain('plan again: `trellis plan checked`');

    const checked = await bob.createJob({ job_type: 'PLAN', configuration_id: target.id });
    await succeed(checked.id, {
      policy_results: [
        { policy_id: policy.id, version: 1, name: 'gate', enforcement: 'mandatory', passed: true, messages: [] },
      ],
    });
    expect((await bob.getJob(checked.id)).actions?.apply).toEqual({ allowed: true });
    const deploy = await bob.createJob({ job_type: 'DEPLOY', configuration_id: target.id, plan_job_id: checked.id });
    await succeed(deploy.id);
  });

  it('a DESTROY of a vine that requires approval needs an approved destroy plan', async () => {
    const target = await vine('retired', { approval: { required: true, separate_approver: true } });
    expect(await outcome(() => bob.createJob({ job_type: 'DESTROY', configuration_id: target.id }))).toBe(
      '409 plan_required',
    );
    const destroyPlan = await bob.createJob({ job_type: 'PLAN', configuration_id: target.id, destroy: true });
    await succeed(destroyPlan.id, { plan_summary: { add: 0, change: 0, destroy: 2 } });
    const apply = () =>
      bob.createJob({ job_type: 'DESTROY', configuration_id: target.id, plan_job_id: destroyPlan.id });
    expect(await outcome(apply)).toBe('409 approval_required');
    expect(
      await outcome(() =>
        bob.createJob({ job_type: 'DEPLOY', configuration_id: target.id, plan_job_id: destroyPlan.id }),
      ),
    ).toBe('409 plan_kind_mismatch');
    // Bob queued it: with a separate approver, Ada approves.
    expect(await outcome(() => bob.approvePlan(destroyPlan.id))).toBe('403 separate_approver_required');
    await ada.approvePlan(destroyPlan.id);
    const destroy = await apply();
    expect(destroy).toMatchObject({ job_type: 'DESTROY', plan_job_id: destroyPlan.id });
    await succeed(destroy.id);
  });

  it('the person whose deploy triggered a plan may not approve it where the approver must differ', async () => {
    const upstream = await vine('network');
    const downstream = await vine('apps', { approval: { required: true, separate_approver: true } });
    await ada.updateConfiguration(downstream.id, { triggers: { after: [upstream.id] } });
    const deploy = await bob.createJob({ job_type: 'DEPLOY', configuration_id: upstream.id });
    await succeed(deploy.id);
    const [triggered] = await ada.listJobs({ vine_id: downstream.id });
    expect(triggered).toMatchObject({ job_type: 'PLAN', created_by: null, trigger: { type: 'upstream' } });
    await succeed(triggered?.id as string);
    const asBob = await bob.getJob(triggered?.id as string);
    expect(asBob.caused_by).toBe((await bob.whoami()).id);
    expect(asBob.actions?.approve).toMatchObject({ allowed: false, code: 'separate_approver_required' });
    expect(await outcome(() => bob.approvePlan(triggered?.id as string))).toBe('403 separate_approver_required');
    expect((await ada.getJob(triggered?.id as string)).actions?.approve).toEqual({ allowed: true });
    await ada.approvePlan(triggered?.id as string);
  });

  it('the person who pushed, signed in with that GitHub account, may not approve the push plan', async () => {
    const target = await vine('pushed', { approval: { required: true, separate_approver: true } });
    const connection = await ada.connectRepository(target.id, {
      provider: 'github',
      repository: REPOSITORY,
      branch: 'main',
      webhook: 'manual',
    });
    const [byAda] = await deliverPush(
      connection.webhook_url,
      connection.webhook_secret as string,
      'a'.repeat(40),
      41001,
    );
    await succeed(byAda as string);
    const plan = await ada.getJob(byAda as string);
    expect(plan).toMatchObject({ created_by: null, caused_by: (await ada.whoami()).id, trigger: { type: 'push' } });
    expect(plan.actions?.approve).toMatchObject({ allowed: false, code: 'separate_approver_required' });
    expect(await outcome(() => ada.approvePlan(byAda as string))).toBe('403 separate_approver_required');
    await bob.approvePlan(byAda as string);
  });
});
