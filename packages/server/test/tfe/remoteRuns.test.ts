/**
 * Remote runs of the stock CLI (issue 27) through the real control plane on SQLite and Postgres,
 * with go-tfe's request shapes on loopback: a run is a PLAN job of an uploaded configuration
 * version (`trigger: cli`, its creator the person behind the token) that a real worker token
 * claims and reports; its TFE status follows the plan, the deploy gate and its apply; `apply`
 * queues the DEPLOY through the gate of `trellis deploy --plan`, `auto-apply` does so when the
 * plan ends, and `discard`, `cancel` and the refusals answer JSON:API errors with problem codes.
 */
import type { TrellisClient } from '@trellis/client';
import { chunksOf, tarGz } from '@trellis/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type AgentClient, type RunningControlPlane, startControlPlane } from '../support/controlPlane.js';
import { describeEachDialect } from '../support/dialects.js';

type Doc = {
  data: { id: string; type: string; attributes: Record<string, unknown>; relationships?: Record<string, unknown> };
  included?: { id: string; type: string; attributes: Record<string, unknown> }[];
  errors?: { status: string; code: string; detail: string }[];
};
type ListDoc = { data: { id: string; attributes: Record<string, unknown> }[]; meta: unknown };

describeEachDialect('remote runs over the Terraform Cloud protocol', (dialect) => {
  let plane: RunningControlPlane;
  let token: string;
  let alice: TrellisClient;
  let agent: AgentClient;
  let aliceId: string;
  let organization: string;
  let workspaceId: string;
  let vineId: string;

  async function api(method: string, path: string, body?: unknown): Promise<{ status: number; doc: Doc }> {
    const response = await fetch(`${plane.url}/api/v2${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/vnd.api+json',
        accept: 'application/vnd.api+json',
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, doc: (text === '' ? {} : JSON.parse(text)) as Doc };
  }

  /** An uploaded configuration version of the workspace, made as the upload endpoint makes one. */
  async function uploadedVersion(): Promise<string> {
    const versions = plane.controlPlane.useCases.configurationVersions;
    const pending = await versions.create({
      owner_id: aliceId,
      vine_id: vineId,
      source: 'upload',
      strip_components: 0,
      created_by: aliceId,
    });
    const archive = tarGz([{ path: 'main.tf', content: 'resource "null_resource" "a" {}\n' }]);
    const uploaded = await versions.ingest(pending, chunksOf(archive));
    return `cv-${uploaded.id}`;
  }

  /** `POST /runs` as go-tfe's `Runs.Create` sends it. */
  function createRun(cv: string, attributes: Record<string, unknown> = {}) {
    return api('POST', '/runs', {
      data: {
        type: 'runs',
        attributes: {
          'is-destroy': false,
          refresh: true,
          'refresh-only': false,
          'auto-apply': false,
          'save-plan': false,
          ...attributes,
        },
        relationships: {
          workspace: { data: { type: 'workspaces', id: workspaceId } },
          'configuration-version': { data: { type: 'configuration-versions', id: cv } },
        },
      },
    });
  }

  const status = async (runId: string) => (await api('GET', `/runs/${runId}`)).doc.data.attributes;
  const jobIdOf = (runId: string) => runId.slice('run-'.length);

  /** The agent claims `jobId` and ends it: a PLAN with its artifact and `changes`. */
  async function finish(jobId: string, changes = 1) {
    const claimed = await agent.claimJob({ features: ['upload_source', 'run_options'] });
    expect(claimed?.job.id).toBe(jobId);
    if (claimed?.job.job_type === 'PLAN') {
      const plan = new TextEncoder().encode('a plan');
      await agent.uploadPlanArtifact(jobId, plan, plan.length);
    }
    await agent.reportStatus(jobId, {
      status: 'SUCCESS',
      execution_metadata: { plan_summary: { add: changes, change: 0, destroy: 0 } },
    });
  }

  beforeAll(async () => {
    plane = await startControlPlane(dialect);
    alice = await plane.userClient('alice@example.com');
    token = await plane.accessToken('alice@example.com');
    agent = await plane.agentClient(alice);
    const account = await api('GET', '/account/details');
    aliceId = account.doc.data.id;
    organization = String(account.doc.data.attributes.username);
    const created = await api('POST', `/organizations/${organization}/workspaces`, {
      data: { type: 'workspaces', attributes: { name: 'web' } },
    });
    expect(created.status).toBe(201);
    workspaceId = created.doc.data.id;
    vineId = workspaceId.slice('ws-'.length);
  });

  afterAll(async () => {
    await plane?.close();
  });

  it('says remote operations are served, and the workspace may queue runs', async () => {
    const entitlements = await api('GET', `/organizations/${organization}/entitlement-set`);
    expect(entitlements.doc.data.attributes.operations).toBe(true);
    const ws = await api('GET', `/workspaces/${workspaceId}`);
    expect(ws.doc.data.attributes.permissions).toMatchObject({ 'can-queue-run': true, 'can-queue-apply': true });
  });

  it('refuses a run of a configuration version that is missing or not uploaded', async () => {
    const missing = await createRun('cv-00000000-0000-4000-8000-000000000000');
    expect(missing.status).toBe(404);
    expect(missing.doc.errors?.[0]?.code).toBe('configuration_version_not_found');
    const pending = await plane.controlPlane.useCases.configurationVersions.create({
      owner_id: aliceId,
      vine_id: vineId,
      source: 'upload',
      strip_components: 0,
      created_by: aliceId,
    });
    const notUploaded = await createRun(`cv-${pending.id}`);
    expect(notUploaded.status).toBe(409);
    expect(notUploaded.doc.errors?.[0]).toMatchObject({ status: '409', code: 'run_configuration_not_uploaded' });
    const bad = await createRun(await uploadedVersion(), { 'target-addrs': 'not-a-list' });
    expect(bad.status).toBe(400);
    expect(bad.doc.errors?.[0]?.code).toBe('validation_failed');
  });

  it("runs the workspace's latest configuration version when the run names none", async () => {
    const latest = await uploadedVersion();
    const created = await api('POST', '/runs', {
      data: {
        type: 'runs',
        attributes: { message: 'no configuration version named' },
        relationships: { workspace: { data: { type: 'workspaces', id: workspaceId } } },
      },
    });
    expect(created.status).toBe(201);
    expect(created.doc.data.relationships['configuration-version']).toEqual({
      data: { type: 'configuration-versions', id: latest },
    });
    expect((await api('POST', `/runs/${created.doc.data.id}/actions/cancel`)).status).toBe(202);
  });

  it('plans an uploaded configuration as a cli job, reports TFE statuses, and applies it through the gate', async () => {
    const cv = await uploadedVersion();
    const created = await createRun(cv, {
      message: 'from my laptop',
      'target-addrs': ['null_resource.a'],
      variables: [{ key: 'region', value: '"eu-west-1"' }],
    });
    expect(created.status).toBe(201);
    const runId = created.doc.data.id;
    expect(runId).toMatch(/^run-[0-9a-f-]{36}$/);
    expect(created.doc.data.attributes).toMatchObject({
      status: 'pending',
      message: 'from my laptop',
      'target-addrs': ['null_resource.a'],
      actions: { 'is-cancelable': true, 'is-confirmable': false, 'is-discardable': false },
      permissions: { 'can-apply': true, 'can-cancel': true, 'can-discard': true },
      variables: [{ key: 'region', value: '***' }],
    });
    expect(created.doc.data.relationships).toMatchObject({
      workspace: { data: { type: 'workspaces', id: workspaceId } },
      'configuration-version': { data: { type: 'configuration-versions', id: cv } },
      plan: { data: { type: 'plans', id: `plan-${jobIdOf(runId)}` } },
      apply: { data: { type: 'applies', id: `apply-${jobIdOf(runId)}` } },
    });

    // The run is a Trellis PLAN job of the person behind the token, its source the upload.
    const job = await alice.getJob(jobIdOf(runId));
    expect(job).toMatchObject({ job_type: 'PLAN', status: 'QUEUED', trigger: { type: 'cli' }, created_by: aliceId });
    expect(job.config_snapshot.source).toEqual({
      type: 'upload',
      configuration_version_id: cv.slice('cv-'.length),
      path: null,
    });
    expect(job.config_snapshot).toMatchObject({
      run_options: { target: ['null_resource.a'], variables: ['region'] },
      variables: { region: { value: '***', sensitive: true } },
    });

    const read = await api('GET', `/runs/${runId}?include=workspace,plan,apply,configuration_version,created_by`);
    expect(read.doc.included?.map((resource) => `${resource.type}/${resource.id}`).sort()).toEqual(
      [
        `applies/apply-${jobIdOf(runId)}`,
        `configuration-versions/${cv}`,
        `plans/plan-${jobIdOf(runId)}`,
        `users/${aliceId}`,
        `workspaces/${workspaceId}`,
      ].sort(),
    );
    const creator = read.doc.included?.find((resource) => resource.type === 'users');
    expect(creator?.attributes).toEqual({ username: organization });

    await finish(jobIdOf(runId));
    expect(await status(runId)).toMatchObject({
      status: 'planned',
      'has-changes': true,
      actions: { 'is-confirmable': true, 'is-discardable': true, 'is-cancelable': false },
    });

    const applied = await api('POST', `/runs/${runId}/actions/apply`, { comment: 'yes' });
    expect(applied.status).toBe(202);
    const queued = await status(runId);
    expect(queued).toMatchObject({
      status: 'apply_queued',
      actions: { 'is-confirmable': false, 'is-cancelable': true },
    });
    expect(queued['status-timestamps']).toHaveProperty('apply-queued-at');
    expect((await api('GET', `/runs/${runId}`)).doc.data.relationships['confirmed-by']).toEqual({
      data: { type: 'users', id: aliceId },
    });
    const again = await api('POST', `/runs/${runId}/actions/apply`);
    expect(again.status).toBe(409);
    expect(again.doc.errors?.[0]?.code).toBe('plan_already_applied');

    const deploys = (await alice.listJobs({ vine_id: vineId })).filter((one) => one.plan_job_id === jobIdOf(runId));
    expect(deploys).toHaveLength(1);
    expect(deploys[0]).toMatchObject({ job_type: 'DEPLOY', trigger: { type: 'cli' }, created_by: aliceId });
    await finish(deploys[0]?.id as string);
    expect((await status(runId)).status).toBe('applied');

    const list = (await api('GET', `/workspaces/${workspaceId}/runs`)).doc as unknown as ListDoc;
    expect(list.data.map((one) => one.id)).toContain(runId);
    const orgList = (await api('GET', `/organizations/${organization}/runs`)).doc as unknown as ListDoc;
    expect(orgList.data.map((one) => one.id)).toContain(runId);
  });

  it('discards a planned run, which is then never applied; a plan of no changes finishes', async () => {
    const runId = (await createRun(await uploadedVersion())).doc.data.id;
    await finish(jobIdOf(runId));
    expect((await api('POST', `/runs/${runId}/actions/discard`, { comment: 'no' })).status).toBe(202);
    expect(await status(runId)).toMatchObject({ status: 'discarded', actions: { 'is-confirmable': false } });
    const apply = await api('POST', `/runs/${runId}/actions/apply`);
    expect(apply.doc.errors?.[0]).toMatchObject({ status: '409', code: 'run_discarded' });
    const twice = await api('POST', `/runs/${runId}/actions/discard`);
    expect(twice.doc.errors?.[0]?.code).toBe('run_not_discardable');
    const audit = await alice.listAuditPage({ action: 'run.discard' });
    expect(audit.items.map((entry) => entry.target.id)).toContain(jobIdOf(runId));

    const none = (await createRun(await uploadedVersion())).doc.data.id;
    await finish(jobIdOf(none), 0);
    expect(await status(none)).toMatchObject({ status: 'planned_and_finished', 'has-changes': false });
    expect((await api('POST', `/runs/${none}/actions/apply`)).doc.errors?.[0]?.code).toBe('run_has_no_changes');
  });

  it('cancels a queued run, once', async () => {
    const runId = (await createRun(await uploadedVersion())).doc.data.id;
    expect((await api('POST', `/runs/${runId}/actions/cancel`)).status).toBe(202);
    expect((await status(runId)).status).toBe('canceled');
    expect((await alice.getJob(jobIdOf(runId))).status).toBe('CANCELLED');
    const again = await api('POST', `/runs/${runId}/actions/force-cancel`);
    expect(again.doc.errors?.[0]).toMatchObject({ status: '409', code: 'run_not_cancelable' });
  });

  it('applies an auto-apply run as its plan ends, and a stale plan is never confirmable', async () => {
    const auto = (await createRun(await uploadedVersion(), { 'auto-apply': true })).doc.data.id;
    await finish(jobIdOf(auto));
    expect((await status(auto)).status).toBe('apply_queued');
    const deploy = (await alice.listJobs({ vine_id: vineId })).find((one) => one.plan_job_id === jobIdOf(auto));
    expect(deploy).toMatchObject({ job_type: 'DEPLOY', trigger: { type: 'cli' }, created_by: aliceId });
    await finish(deploy?.id as string);
    expect((await status(auto)).status).toBe('applied');

    // A workspace variable changed after the plan: the plan is stale.
    const stale = (await createRun(await uploadedVersion())).doc.data.id;
    await finish(jobIdOf(stale));
    const variable = await api('POST', `/workspaces/${workspaceId}/vars`, {
      data: { type: 'vars', attributes: { key: 'size', value: 'large', category: 'terraform' } },
    });
    expect(variable.status).toBe(201);
    expect(await status(stale)).toMatchObject({ status: 'planned', actions: { 'is-confirmable': false } });
    expect((await api('POST', `/runs/${stale}/actions/apply`)).doc.errors?.[0]?.code).toBe('plan_stale');
  });

  it('answers 404 for a run id that is not one, or of no run', async () => {
    expect((await api('GET', '/runs/run-nope')).status).toBe(404);
    const other = await api('GET', '/runs/run-00000000-0000-4000-8000-000000000000');
    expect(other.doc.errors?.[0]).toMatchObject({ status: '404', code: 'run_not_found' });
  });
  // Last: it deletes the workspace the other tests use.
  it('deletes a workspace that has run jobs as trellis configs delete does: never while a job is queued', async () => {
    const queued = await createRun(await uploadedVersion());
    expect(queued.status).toBe(201);
    const busy = await api('DELETE', `/workspaces/${workspaceId}`);
    expect(busy.status).toBe(409);
    expect(busy.doc.errors?.[0]?.code).toBe('configuration_busy');
    expect((await api('POST', `/runs/${queued.doc.data.id}/actions/cancel`)).status).toBe(202);
    expect((await api('DELETE', `/workspaces/${workspaceId}`)).status).toBe(204);
    expect((await api('GET', `/workspaces/${workspaceId}`)).status).toBe(404);
    // Its jobs stay, as a deleted configuration's do.
    expect((await alice.getJob(jobIdOf(queued.doc.data.id))).status).toBe('CANCELLED');
  });
});
