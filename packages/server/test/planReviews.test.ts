/**
 * Approvals and overrides of plans over HTTP on SQLite and Postgres (issue 15): an agent of the
 * organization's pool reports policy results with a plan (the agent protocol lets the claiming
 * worker report `execution_metadata`); the deploy gate answers `policy_failed` with the failed
 * policies, `approval_required` and `plan_rejected`; operators approve and reject, admins override,
 * an operator's override is refused; a separate approver; a stale plan; `plan.needs_approval`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TrellisApiError, TrellisClient } from '@trellis/client';
import { joinOrg, type TestDatabase } from '@trellis/testkit';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { INLINE_MAIN_TF, type RunningControlPlane, startControlPlane } from './support/controlPlane.js';
import { describeEachDialect } from './support/dialects.js';

const FAILED_MANDATORY = {
  policy_id: '00000000-0000-4000-8000-00000000a001',
  version: 3,
  name: 'no-public-buckets',
  enforcement: 'mandatory',
  passed: false,
  messages: ['aws_s3_bucket.logs must not be public'],
};
const FAILED_ADVISORY = {
  policy_id: '00000000-0000-4000-8000-00000000a002',
  version: 1,
  name: 'small-instances',
  enforcement: 'advisory',
  passed: false,
  messages: ['aws_instance.big is larger than t3.large'],
};

/** What a call came to: `ok`, or the problem's status and code. */
async function outcome(call: () => Promise<unknown>): Promise<string> {
  try {
    await call();
    return 'ok';
  } catch (error) {
    if (error instanceof TrellisApiError) return `${error.status} ${error.code}`;
    throw error;
  }
}

async function problemOf(call: () => Promise<unknown>): Promise<TrellisApiError> {
  try {
    await call();
  } catch (error) {
    if (error instanceof TrellisApiError) return error;
    throw error;
  }
  throw new Error('expected a problem');
}

/** Runs a statement past the stores (as the connecting role). */
async function exec(database: TestDatabase, sql: string, bindings: unknown[] = []): Promise<void> {
  if (database.dialect === 'sqlite') {
    const db = new Database(database.url.slice('sqlite://'.length));
    try {
      db.prepare(sql).run(...bindings);
    } finally {
      db.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    let n = 0;
    await client.query(
      sql.replace(/\?/g, () => `$${++n}`),
      bindings,
    );
  } finally {
    await client.end();
  }
}

/** A receiver on loopback that answers 200: the notification only has to be deliverable. */
async function startReceiver(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200).end('ok'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describeEachDialect('plan approvals and overrides over HTTP', (dialect) => {
  let plane: RunningControlPlane;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let ada: TrellisClient; // owner
  let bob: TrellisClient; // operator
  let cy: TrellisClient; // admin
  let agent: TrellisClient;
  let orgId: string;
  let vineyardId: string;

  beforeAll(async () => {
    receiver = await startReceiver();
    plane = await startControlPlane(dialect, {
      env: { TRELLIS_NOTIFICATIONS_ALLOW_PRIVATE_URLS: 'true' },
    });
    ada = await plane.userClient('ada@example.test');
    bob = await plane.userClient('bob@example.test');
    cy = await plane.userClient('cy@example.test');
    const org = await ada.createOrg('platform');
    orgId = org.id;
    await joinOrg(ada, bob, orgId, 'bob@example.test', 'operator');
    await joinOrg(ada, cy, orgId, 'cy@example.test', 'admin');
    vineyardId = (await ada.createVineyard('prod', { orgId })).id;
    const { worker_id, worker_token } = await ada.registerWorker({ name: 'pool', orgId });
    agent = new TrellisClient({
      baseUrl: plane.url,
      auth: { kind: 'worker', workerId: worker_id, workerToken: worker_token },
    });
  });
  afterAll(async () => {
    await plane?.close();
    await receiver?.close();
  });

  async function newVine(name: string, approval?: { required: boolean; separate_approver?: boolean }) {
    return ada.createConfiguration({
      name,
      vineyard_id: vineyardId,
      source: { type: 'inline', files: { 'main.tf': INLINE_MAIN_TF } },
      ...(approval ? { approval } : {}),
    });
  }

  /** A PLAN queued by `by`, claimed and reported SUCCESS by the pool's agent with `metadata`. */
  async function plan(by: TrellisClient, vineId: string, metadata: Record<string, unknown> = {}) {
    const job = await by.createJob({ job_type: 'PLAN', configuration_id: vineId });
    const claimed = await agent.claimJob();
    expect(claimed?.job.id).toBe(job.id);
    const bytes = new TextEncoder().encode('plan-bytes');
    await agent.uploadPlanArtifact(job.id, bytes, bytes.byteLength);
    await agent.reportStatus(job.id, {
      status: 'SUCCESS',
      execution_metadata: { plan_summary: { add: 1, change: 0, destroy: 0 }, ...metadata },
    });
    return job;
  }

  const deploy = (by: TrellisClient, vineId: string, planJobId?: string) =>
    by.createJob({
      job_type: 'DEPLOY',
      configuration_id: vineId,
      ...(planJobId === undefined ? {} : { plan_job_id: planJobId }),
    });

  /** Deploys are left queued; they are cancelled so the next plan of the vine can be claimed. */
  async function deployAndCancel(by: TrellisClient, vineId: string, planJobId: string) {
    const queued = await deploy(by, vineId, planJobId);
    expect(queued.plan_job_id).toBe(planJobId);
    await by.cancelJob(queued.id);
  }

  it('a failed mandatory policy blocks the deploy (409 policy_failed with the messages) until an admin overrides it', async () => {
    const vine = await newVine('policies');
    const job = await plan(bob, vine.id, { policy_results: [FAILED_MANDATORY, FAILED_ADVISORY] });
    const refused = await problemOf(() => deploy(bob, vine.id, job.id));
    expect(refused.status).toBe(409);
    expect(refused.code).toBe('policy_failed');
    expect(refused.extensions.failed_policies).toEqual([
      {
        policy_id: FAILED_MANDATORY.policy_id,
        version: 3,
        name: 'no-public-buckets',
        messages: ['aws_s3_bucket.logs must not be public'],
      },
    ]);
    expect(await outcome(() => bob.overridePlan(job.id, { reason: 'please' }))).toBe('403 insufficient_role');
    expect(await outcome(() => cy.overridePlan(job.id, { reason: '' }))).toBe('400 validation_failed');
    const overridden = await cy.overridePlan(job.id, { reason: 'the logs bucket is public by design' });
    expect(overridden.policy_override).toMatchObject({
      email: 'cy@example.test',
      reason: 'the logs bucket is public by design',
    });
    expect((await bob.getJob(job.id)).policy_override?.reason).toBe('the logs bucket is public by design');
    expect(await outcome(() => cy.overridePlan(job.id, { reason: 'again' }))).toBe('409 plan_already_overridden');
    await deployAndCancel(bob, vine.id, job.id);
    const audit = await ada.listAuditPage({ orgId, action: 'plan.override' });
    expect(audit.items.map((entry) => entry.target.id)).toEqual([job.id]);
    expect(audit.items[0]?.details).toMatchObject({ reason: 'the logs bucket is public by design' });
  });

  it('advisory failures never block; an override needs a failed mandatory policy (409)', async () => {
    const vine = await newVine('advisory');
    const job = await plan(bob, vine.id, { policy_results: [FAILED_ADVISORY] });
    expect(await outcome(() => cy.overridePlan(job.id, { reason: 'nothing' }))).toBe('409 no_failed_policies');
    await deployAndCancel(bob, vine.id, job.id);
  });

  it('approval required, with a separate approver: the planner cannot approve (403), another operator or admin can', async () => {
    const vine = await newVine('approved');
    const set = await ada.updateConfiguration(vine.id, { approval: { required: true, separate_approver: true } });
    expect(set.approval).toEqual({ required: true, separate_approver: true });
    expect(await outcome(() => bob.updateConfiguration(vine.id, { approval: null }))).toBe('403 insufficient_role');
    const job = await plan(bob, vine.id);
    expect((await bob.getJob(job.id)).created_by).not.toBeNull();
    expect(await outcome(() => deploy(bob, vine.id, job.id))).toBe('409 approval_required');
    // Without a plan: refused, naming the plan to make first (issue 23).
    expect(await outcome(() => deploy(bob, vine.id))).toBe('409 plan_required');
    expect(await outcome(() => bob.approvePlan(job.id))).toBe('403 separate_approver_required');
    const approved = await cy.approvePlan(job.id, { comment: 'reviewed the diff' });
    expect(approved.approval).toMatchObject({
      decision: 'approved',
      email: 'cy@example.test',
      comment: 'reviewed the diff',
    });
    expect(await outcome(() => cy.approvePlan(job.id))).toBe('409 plan_already_decided');
    await deployAndCancel(bob, vine.id, job.id);
    const audit = await ada.listAuditPage({ orgId, action: 'plan.approve' });
    expect(audit.items.map((entry) => entry.target.id)).toContain(job.id);
  });

  it('a rejection ends the plan’s path to deploy; a stale plan cannot be approved', async () => {
    const vine = await newVine('rejected', { required: true });
    expect(vine.approval).toEqual({ required: true, separate_approver: false });
    const rejectedPlan = await plan(bob, vine.id);
    expect(await outcome(() => bob.rejectPlan(rejectedPlan.id, { comment: '' }))).toBe('400 validation_failed');
    const rejected = await bob.rejectPlan(rejectedPlan.id, { comment: 'wrong region' });
    expect(rejected.approval).toMatchObject({ decision: 'rejected', comment: 'wrong region' });
    expect(await outcome(() => deploy(bob, vine.id, rejectedPlan.id))).toBe('409 plan_rejected');
    expect(await outcome(() => cy.approvePlan(rejectedPlan.id))).toBe('409 plan_already_decided');

    const stalePlan = await plan(bob, vine.id);
    await exec(plane.database, 'UPDATE vines SET variables = ? WHERE id = ?', [
      JSON.stringify({ region: { value: 'us-east-1', sensitive: false } }),
      vine.id,
    ]);
    expect(await outcome(() => bob.approvePlan(stalePlan.id))).toBe('409 plan_stale');
    expect((await bob.getJob(stalePlan.id)).approval).toBeNull();
  });

  it('a viewer sees the plan but cannot approve it; a drift check or a deploy cannot be approved', async () => {
    const dan = await plane.userClient('dan@example.test');
    await joinOrg(ada, dan, orgId, 'dan@example.test', 'viewer');
    const vine = await newVine('viewers');
    const job = await plan(bob, vine.id);
    expect((await dan.getJob(job.id)).approval).toBeNull();
    expect(await outcome(() => dan.approvePlan(job.id))).toBe('403 insufficient_role');
    const planless = await deploy(bob, vine.id);
    expect(await outcome(() => bob.approvePlan(planless.id))).toBe('409 not_a_plan_job');
    await bob.cancelJob(planless.id);
  });

  it('plan.needs_approval is recorded when a plan of an approval-required vine succeeds with changes', async () => {
    const notification = await ada.createNotification({
      name: 'reviewers',
      kind: 'webhook',
      url: receiver.url,
      events: ['plan.needs_approval'],
      org_id: orgId,
    });
    const quiet = await newVine('no-approval');
    await plan(bob, quiet.id);
    const vine = await newVine('needs-approval', { required: true });
    await plan(bob, vine.id, { plan_summary: { add: 0, change: 0, destroy: 0 } });
    const job = await plan(bob, vine.id);
    const page = await ada.listDeliveriesPage(notification.id);
    expect(page.items.map((delivery) => delivery.event)).toEqual(['plan.needs_approval']);
    expect(page.items[0]?.payload).toMatchObject({ event: 'plan.needs_approval', job: { id: job.id } });
  });
});
