/**
 * A plan's change document over HTTP on SQLite and Postgres (issue 29): the agent that claimed
 * the running PLAN stores it after the plan file (`PUT /api/jobs/{id}/plan-changes`), checked
 * against the contract; people who may read the job read it once the plan succeeded
 * (`GET /api/cli/jobs/{id}/plan/changes`); a job without one is `404 plan_changes_not_found`.
 */
import { TrellisApiError, TrellisClient } from '@trellis/client';
import type { PlanChanges } from '@trellis/core';
import { joinOrg } from '@trellis/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { INLINE_MAIN_TF, type RunningControlPlane, startControlPlane } from './support/controlPlane.js';
import { describeEachDialect } from './support/dialects.js';

async function outcome(call: () => Promise<unknown>): Promise<string> {
  try {
    await call();
    return 'ok';
  } catch (error) {
    if (error instanceof TrellisApiError) return `${error.status} ${error.code}`;
    throw error;
  }
}

const DOCUMENT: PlanChanges = {
  format_version: 1,
  resource_changes: [
    {
      address: 'module.db.aws_db_instance.main',
      module_address: 'module.db',
      type: 'aws_db_instance',
      name: 'main',
      actions: ['update'],
      attributes: [
        { path: 'password', before: { sensitive: true }, after: { sensitive: true } },
        { path: 'port', before: { value: 5432 }, after: { value: 5433 } },
        { path: 'arn', after: { unknown: true } },
      ],
      attributes_omitted: 0,
      unchanged_attributes: 4,
    },
    {
      address: 'aws_instance.web',
      module_address: null,
      type: 'aws_instance',
      name: 'web',
      actions: ['delete', 'create'],
      action_reason: 'replace_because_cannot_update',
      attributes: [{ path: 'ami', before: { value: 'ami-1' }, after: { value: 'ami-2' }, forces_replacement: true }],
      attributes_omitted: 0,
      unchanged_attributes: 2,
    },
  ],
  resource_changes_omitted: 0,
  output_changes: [
    {
      name: 'endpoint',
      actions: ['update'],
      attributes: [{ path: 'endpoint', before: { value: 'a' }, after: { value: 'b' } }],
      attributes_omitted: 0,
    },
  ],
  output_changes_omitted: 0,
  truncated: false,
};

describeEachDialect("a plan's change document over HTTP", (dialect) => {
  let plane: RunningControlPlane;
  let ada: TrellisClient; // owner
  let vic: TrellisClient; // viewer
  let eve: TrellisClient; // not a member
  let agent: TrellisClient;
  let other: TrellisClient; // another agent of the pool
  let vineId: string;

  beforeAll(async () => {
    plane = await startControlPlane(dialect);
    ada = await plane.userClient('ada@example.test');
    vic = await plane.userClient('vic@example.test');
    eve = await plane.userClient('eve@example.test');
    const org = await ada.createOrg('platform');
    await joinOrg(ada, vic, org.id, 'vic@example.test', 'viewer');
    const vineyard = await ada.createVineyard('prod', { orgId: org.id });
    const agentOf = async (name: string) => {
      const { worker_id, worker_token } = await ada.registerWorker({ name, orgId: org.id });
      return new TrellisClient({
        baseUrl: plane.url,
        auth: { kind: 'worker', workerId: worker_id, workerToken: worker_token },
      });
    };
    agent = await agentOf('pool-1');
    other = await agentOf('pool-2');
    const vine = await ada.createConfiguration({
      name: 'db',
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': INLINE_MAIN_TF } },
    });
    vineId = vine.id;
  });
  afterAll(async () => {
    await plane?.close();
  });

  async function claimedPlan(): Promise<string> {
    const job = await ada.createJob({ job_type: 'PLAN', configuration_id: vineId });
    expect((await agent.claimJob())?.job.id).toBe(job.id);
    return job.id;
  }

  async function uploadPlanFile(jobId: string): Promise<void> {
    const bytes = new TextEncoder().encode('plan-bytes');
    await agent.uploadPlanArtifact(jobId, bytes, bytes.byteLength);
  }

  it('is stored by the claiming agent after the plan file and read by whoever may read the job', async () => {
    const jobId = await claimedPlan();
    expect(await outcome(() => agent.uploadPlanChanges(jobId, DOCUMENT))).toBe('404 plan_artifact_not_found');
    await uploadPlanFile(jobId);
    expect(await outcome(() => other.uploadPlanChanges(jobId, DOCUMENT))).toBe('403 job_not_claimed_by_worker');
    const stored = await agent.uploadPlanChanges(jobId, DOCUMENT);
    expect(stored).toMatchObject({ job_id: jobId });
    expect(stored.size).toBe(Buffer.byteLength(JSON.stringify(DOCUMENT)));
    // Not finished yet: nothing to review.
    expect(await outcome(() => ada.getPlanChanges(jobId))).toBe('404 plan_changes_not_found');
    await agent.reportStatus(jobId, { status: 'SUCCESS', execution_metadata: {} });

    expect(await ada.getPlanChanges(jobId)).toEqual({ job_id: jobId, ...DOCUMENT });
    expect(await vic.getPlanChanges(jobId)).toEqual({ job_id: jobId, ...DOCUMENT });
    expect(await outcome(() => eve.getPlanChanges(jobId))).toBe('404 job_not_found');
    // Once the job ended, nothing more is stored.
    expect(await outcome(() => agent.uploadPlanChanges(jobId, DOCUMENT))).toBe('409 job_not_running');
  });

  it('refuses a document that is not of the contract (a value beside a mask, an unknown field)', async () => {
    const jobId = await claimedPlan();
    await uploadPlanFile(jobId);
    const resource = DOCUMENT.resource_changes[0];
    const leaky = {
      ...DOCUMENT,
      resource_changes: [
        { ...resource, attributes: [{ path: 'password', after: { sensitive: true, value: 'oops' } }] },
      ],
    } as unknown as PlanChanges;
    expect(await outcome(() => agent.uploadPlanChanges(jobId, leaky))).toBe('400 validation_failed');
    const extra = { ...DOCUMENT, secrets: ['x'] } as unknown as PlanChanges;
    expect(await outcome(() => agent.uploadPlanChanges(jobId, extra))).toBe('400 validation_failed');
    await agent.reportStatus(jobId, { status: 'SUCCESS', execution_metadata: {} });
    expect(await outcome(() => ada.getPlanChanges(jobId))).toBe('404 plan_changes_not_found');
  });

  it('is 404 plan_changes_not_found for a plan of an older agent, a failed plan and a job that is no plan', async () => {
    const old = await claimedPlan();
    await uploadPlanFile(old);
    await agent.reportStatus(old, { status: 'SUCCESS', execution_metadata: {} });
    const answer = await outcome(() => ada.getPlanChanges(old));
    expect(answer).toBe('404 plan_changes_not_found');

    const failed = await claimedPlan();
    await uploadPlanFile(failed);
    await agent.uploadPlanChanges(failed, DOCUMENT);
    await agent.reportStatus(failed, { status: 'FAILED', error_message: 'the engine failed' });
    expect(await outcome(() => ada.getPlanChanges(failed))).toBe('404 plan_changes_not_found');

    const deploy = await ada.createJob({ job_type: 'DEPLOY', configuration_id: vineId });
    expect(await outcome(() => ada.getPlanChanges(deploy.id))).toBe('404 plan_changes_not_found');
    await ada.cancelJob(deploy.id);
    expect(await outcome(() => ada.getPlanChanges('00000000-0000-4000-8000-000000000000'))).toBe('404 job_not_found');
  });
});
