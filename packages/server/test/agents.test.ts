import { request as httpRequest } from 'node:http';
import { Readable } from 'node:stream';
import { TrellisApiError, type TrellisClient } from '@trellis/client';
import { AGENT_FEATURES, DEPLOY_OFFER_MS } from '@trellis/core';
import { FakeClock } from '@trellis/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  RELEASE_SECRET,
  type RunningControlPlane,
  startControlPlane,
  vineyardWithConfiguration,
} from './support/controlPlane.js';
import { describeEachDialect } from './support/dialects.js';

async function apiError(promise: Promise<unknown>): Promise<TrellisApiError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof TrellisApiError) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
}

const MiB = 1024 * 1024;

/** A stream of `size` deterministic bytes, produced lazily. */
function bytes(size: number, seed = 1): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= size) return controller.close();
      const chunk = Buffer.alloc(Math.min(256 * 1024, size - sent), (sent / 1024 + seed) % 251);
      sent += chunk.length;
      controller.enqueue(chunk);
    },
  });
}

describeEachDialect('the agent protocol over HTTP', (dialect) => {
  let server: RunningControlPlane;
  const clock = new FakeClock(new Date());
  let users = 0;

  beforeAll(async () => {
    server = await startControlPlane(dialect, {
      clock,
      env: { TRELLIS_LOST_JOB_TIMEOUT_S: '120', TRELLIS_SWEEP_INTERVAL_S: '1' },
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  /** Each test gets its own user, so queues never mix. */
  async function freshUser(): Promise<TrellisClient> {
    users += 1;
    return server.userClient(`user${users}@example.com`);
  }

  it('registers, heartbeats and reports worker status', async () => {
    const user = await freshUser();
    const agent = await server.agentClient(user, 'runner-1');
    expect((await user.getWorker(agent.workerId)).status).toBe('OFFLINE');
    expect(await agent.heartbeat('1.4.0')).toEqual({
      cancel_job_ids: [],
      heartbeat_interval_s: 30,
      lost_job_timeout_s: 120,
    });
    const worker = await user.getWorker(agent.workerId);
    expect(worker).toMatchObject({ status: 'ONLINE', version: '1.4.0', mode: 'self-hosted', name: 'runner-1' });
    const { configuration } = await vineyardWithConfiguration(user, 'busy');
    await user.createJob({ job_type: 'PLAN', configuration_id: configuration.id });
    await agent.claimJob();
    expect((await user.getWorker(agent.workerId)).status).toBe('BUSY');
    clock.advance({ seconds: 61 });
    expect((await user.getWorker(agent.workerId)).status).toBe('OFFLINE');
    await agent.heartbeat('1.4.0');
  });

  it('writes steady heartbeats at the next flush, and one that brings an agent back at once', async () => {
    const user = await freshUser();
    const agent = await server.agentClient(user, 'steady');
    await agent.heartbeat('2.0.0');
    clock.advance({ seconds: 20 });
    await agent.heartbeat('2.0.1');
    await server.controlPlane.useCases.workers.flushHeartbeats();
    expect(await user.getWorker(agent.workerId)).toMatchObject({
      status: 'ONLINE',
      last_heartbeat: clock.now().toISOString(),
      version: '2.0.1',
    });
    clock.advance({ seconds: 61 });
    expect((await user.getWorker(agent.workerId)).status).toBe('OFFLINE');
    // No flush in between: the heartbeat after the silence was written with its request.
    await agent.heartbeat('2.0.1');
    expect(await user.getWorker(agent.workerId)).toMatchObject({
      status: 'ONLINE',
      last_heartbeat: clock.now().toISOString(),
    });
  });

  it('answers 204 with no job and long-polls until one is queued', async () => {
    const user = await freshUser();
    const agent = await server.agentClient(user);
    expect(await agent.claimJob()).toBeNull();
    const { configuration } = await vineyardWithConfiguration(user, 'waiting');
    const claim = agent.claimJob({ wait: 20 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const job = await user.createJob({ job_type: 'PLAN', configuration_id: configuration.id });
    const claimed = await claim;
    expect(claimed?.job.id).toBe(job.id);
  });

  it('gives the agent the unredacted snapshot and the cloud identity', async () => {
    const user = await freshUser();
    const vineyard = await user.createVineyard('aws');
    const vine = await user.createConfiguration({
      name: 'eks',
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': 'output "x" { value = 1 }' } },
      variables: { token: { value: 'agent-only-secret', sensitive: true } },
      cloud_identity: { role_arn: 'arn:aws:iam::123456789012:role/deployer' },
    });
    await user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
    const agent = await server.agentClient(user);
    const claimed = await agent.claimJob();
    expect(claimed?.job.config_snapshot.variables.token?.value).toBe('agent-only-secret');
    expect(claimed?.cloud_identity).toEqual({
      kind: 'assume_role',
      provider: 'aws',
      role_arn: 'arn:aws:iam::123456789012:role/deployer',
      external_id: vine.cloud_identity?.kind === 'assume_role' ? vine.cloud_identity.external_id : null,
    });
    // An assumed role gets no OIDC token.
    expect(claimed?.identity_token).toBeNull();
    expect((await user.getConfiguration(vine.id)).status).toBe('PLANNING');
  });

  it('takes status reports from the claiming agent only, along legal transitions', async () => {
    const user = await freshUser();
    const { configuration } = await vineyardWithConfiguration(user, 'status');
    const job = await user.createJob({ job_type: 'PLAN', configuration_id: configuration.id });
    const agent = await server.agentClient(user, 'a');
    const other = await server.agentClient(user, 'b');
    await agent.claimJob();
    const queued = await apiError(agent.reportStatus(job.id, { status: 'QUEUED' as never }));
    expect(queued.status).toBe(400);
    const stranger = await apiError(other.reportStatus(job.id, { status: 'SUCCESS' }));
    expect([stranger.status, stranger.code]).toEqual([403, 'job_not_claimed_by_worker']);
    const progress = await agent.reportStatus(job.id, { status: 'PROCESSING', execution_metadata: { step: 'plan' } });
    expect(progress.execution_metadata).toEqual({ step: 'plan' });
    const done = await agent.reportStatus(job.id, { status: 'SUCCESS', execution_metadata: { add: 1 } });
    expect(done).toMatchObject({ status: 'SUCCESS', execution_metadata: { step: 'plan', add: 1 } });
    expect(done.finished_at).not.toBeNull();
    const again = await apiError(agent.reportStatus(job.id, { status: 'FAILED' }));
    expect([again.status, again.code]).toEqual([409, 'invalid_transition']);
    expect((await user.getConfiguration(configuration.id)).status).toBe('PLANNED');
  });

  it('finalizes a successful DEPLOY onto the vine, and a FAILED job fails the vine', async () => {
    const user = await freshUser();
    const { configuration } = await vineyardWithConfiguration(user, 'deploy');
    const agent = await server.agentClient(user);
    const deploy = await user.createJob({ job_type: 'DEPLOY', configuration_id: configuration.id });
    await agent.claimJob();
    await agent.reportStatus(deploy.id, {
      status: 'SUCCESS',
      execution_metadata: {
        cluster_name: 'prod-eks',
        cluster_endpoint: 'https://eks.example.com',
        argocd_url: 'https://argocd.example.com',
        outputs: { region: { value: 'eu-west-1', sensitive: false }, password: { value: 'hide', sensitive: true } },
      },
    });
    const deployed = await user.getConfiguration(configuration.id);
    expect(deployed.status).toBe('DEPLOYED');
    expect(deployed.components.cluster).toMatchObject({ name: 'prod-eks', endpoint: 'https://eks.example.com' });
    expect(deployed.components.argocd?.url).toBe('https://argocd.example.com');
    expect(deployed.components.outputs?.values).toEqual({ region: 'eu-west-1' });

    const plan = await user.createJob({ job_type: 'PLAN', configuration_id: configuration.id });
    await agent.claimJob();
    await agent.reportStatus(plan.id, { status: 'FAILED', error_message: 'Error: Unsupported argument' });
    const failed = await user.getConfiguration(configuration.id);
    expect([failed.status, failed.status_message]).toEqual(['FAILED', 'Error: Unsupported argument']);
    expect(failed.components.cluster?.name).toBe('prod-eks');
  });

  it('stores, pages and bounds log chunks', async () => {
    const user = await freshUser();
    const { configuration } = await vineyardWithConfiguration(user, 'logs');
    const job = await user.createJob({ job_type: 'PLAN', configuration_id: configuration.id });
    const agent = await server.agentClient(user);
    await agent.claimJob();
    const ids: number[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await agent.appendLog(job.id, `line ${i}\n`, i === 3 ? 'STDERR' : 'STDOUT')).id);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    const page = await agent.readLogs(job.id, { after: ids[1], limit: 2 });
    expect(page.logs.map((l) => l.log_chunk)).toEqual(['line 2\n', 'line 3\n']);
    expect(page.logs[1]?.stream_type).toBe('STDERR');
    expect(page.has_more).toBe(true);
    const all = await user.getJobLogs(job.id);
    expect([all.logs.length, all.has_more]).toEqual([5, false]);
    const huge = await apiError(agent.appendLog(job.id, 'x'.repeat(MiB + 1), 'STDOUT'));
    expect([huge.status, huge.code]).toEqual([413, 'log_chunk_too_large']);
    const badStream = await apiError(agent.appendLog(job.id, 'x', 'STDIN' as never));
    expect(badStream.status).toBe(400);
  });

  it('tells the agent about a cancel through heartbeats and log answers', async () => {
    const user = await freshUser();
    const { configuration } = await vineyardWithConfiguration(user, 'cancel');
    const job = await user.createJob({ job_type: 'DEPLOY', configuration_id: configuration.id });
    const agent = await server.agentClient(user);
    await agent.claimJob();
    expect((await user.getConfiguration(configuration.id)).status).toBe('DEPLOYING');
    await user.cancelJob(job.id);
    expect((await agent.heartbeat('1.0.0')).cancel_job_ids).toEqual([job.id]);
    expect((await agent.appendLog(job.id, 'interrupted\n', 'SYSTEM')).job_status).toBe('CANCELLED');
    expect((await user.getConfiguration(configuration.id)).status).toBe('NEW');
    const late = await apiError(agent.reportStatus(job.id, { status: 'SUCCESS' }));
    expect(late.code).toBe('invalid_transition');
  });

  it('streams plan artifacts in and out, enforcing 50 MiB while streaming', async () => {
    const user = await freshUser();
    const { configuration } = await vineyardWithConfiguration(user, 'artifacts');
    const plan = await user.createJob({ job_type: 'PLAN', configuration_id: configuration.id });
    const agent = await server.agentClient(user, 'planner');
    const applier = await server.agentClient(user, 'applier');
    await agent.claimJob();
    const content = Buffer.from('a terraform plan file\n'.repeat(1000));
    const stored = await agent.uploadPlanArtifact(plan.id, content, content.length);
    expect(stored.size).toBe(content.length);

    const forbidden = await apiError(applier.uploadPlanArtifact(plan.id, content, content.length));
    expect(forbidden.status).toBe(403);
    // Over the limit without a declared length: cut off while streaming, the first upload kept.
    const tooLarge = await apiError(agent.uploadPlanArtifact(plan.id, bytes(50 * MiB + 1)));
    expect([tooLarge.status, tooLarge.code]).toEqual([413, 'artifact_too_large']);
    // A declared length over the limit is refused before the body is read.
    const declared = await new Promise<number>((resolve, reject) => {
      const request = httpRequest(`${server.url}/api/jobs/${plan.id}/plan-artifact`, {
        method: 'POST',
        headers: {
          'content-type': 'application/octet-stream',
          'content-length': String(50 * MiB + 1),
          'x-worker-id': agent.workerId,
          'x-worker-token': agent.workerToken,
        },
      });
      request.on('response', (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
        request.destroy();
      });
      request.on('error', reject);
      request.write(Buffer.alloc(1024));
    });
    expect(declared).toBe(413);

    const download = await applier.downloadPlanArtifact(plan.id);
    expect(download.sha256).toBe(stored.sha256);
    expect(download.size).toBe(content.length);
    expect(Buffer.concat(await Readable.fromWeb(download.body as never).toArray())).toEqual(content);

    // multipart/form-data with a single file is accepted too.
    const form = new FormData();
    form.append('file', new Blob([Buffer.from('from a form')]), 'terraform.plan.out');
    const response = await fetch(`${server.url}/api/jobs/${plan.id}/plan-artifact`, {
      method: 'POST',
      headers: { 'x-worker-id': agent.workerId, 'x-worker-token': agent.workerToken },
      body: form,
    });
    expect(response.status).toBe(201);
    expect((await response.json()).size).toBe('from a form'.length);
  });

  it("says a DEPLOY is held for its plan's agent, and until when, on the job and in the queue (issue 31)", async () => {
    const user = await freshUser();
    const { configuration } = await vineyardWithConfiguration(user, 'held');
    const planner = await server.agentClient(user, 'planner');
    const other = await server.agentClient(user, 'bystander');
    await Promise.all([planner.heartbeat('1.0.0'), other.heartbeat('1.0.0')]);
    const plan = await user.createJob({ job_type: 'PLAN', configuration_id: configuration.id });
    await planner.claimJob();
    await planner.uploadPlanArtifact(plan.id, Buffer.from('plan'), 4);
    await planner.reportStatus(plan.id, { status: 'SUCCESS' });
    const deploy = await user.createJob({
      job_type: 'DEPLOY',
      configuration_id: configuration.id,
      plan_job_id: plan.id,
    });
    const until = new Date(clock.now().getTime() + DEPLOY_OFFER_MS).toISOString();
    const held = { reason: 'offered', message: expect.stringContaining(`held until ${until} for planner,`) };
    expect((await user.getJob(deploy.id)).waiting_for).toEqual(held);
    const entry = (await user.getQueue()).jobs.find((queued) => queued.job.id === deploy.id);
    expect(entry?.waiting_for).toEqual(held);
    // The other agent passes it over; once the time has come, it waits for nothing.
    expect(await other.claimJob()).toBeNull();
    clock.advance({ ms: DEPLOY_OFFER_MS });
    expect((await user.getJob(deploy.id)).waiting_for).toBeNull();
    expect((await other.claimJob())?.job.id).toBe(deploy.id);
  });

  it('claims the next job with a final report that asks for it, and only then (claim_next, issue 31)', async () => {
    const user = await freshUser();
    const first = await vineyardWithConfiguration(user, 'chain-first');
    const second = await vineyardWithConfiguration(user, 'chain-second');
    const agent = await server.agentClient(user, 'chained');
    const plan = await user.createJob({ job_type: 'PLAN', configuration_id: first.configuration.id });
    const next = await user.createJob({ job_type: 'PLAN', configuration_id: second.configuration.id });
    expect((await agent.claimJob({ features: AGENT_FEATURES }))?.job.id).toBe(plan.id);
    // A report that does not end the job claims nothing.
    const progress = await agent.reportStatus(plan.id, { status: 'PROCESSING' }, { claimNext: AGENT_FEATURES });
    expect(progress.next_claim).toBeNull();
    expect((await user.getJob(next.id)).status).toBe('QUEUED');
    await agent.uploadPlanArtifact(plan.id, Buffer.from('plan'), 4);
    const ended = await agent.reportStatus(plan.id, { status: 'SUCCESS' }, { claimNext: AGENT_FEATURES });
    expect(ended).toMatchObject({ id: plan.id, status: 'SUCCESS' });
    // The answer is a claim's: the job with its snapshot, and the token of its state.
    expect(ended.next_claim?.job).toMatchObject({ id: next.id, status: 'PROCESSING' });
    expect(ended.next_claim?.state_token).toEqual(expect.any(String));
    expect((await user.getJob(next.id)).status).toBe('PROCESSING');
    // Nothing else queued: the next final report's claim is null; a report without it has none.
    const last = await agent.reportStatus(next.id, { status: 'FAILED', error_message: 'boom' }, { claimNext: [] });
    expect(last.next_claim).toBeNull();
    const again = await user.createJob({ job_type: 'PLAN', configuration_id: first.configuration.id });
    await agent.claimJob({ features: AGENT_FEATURES });
    const plain = await agent.reportStatus(again.id, { status: 'FAILED', error_message: 'boom' });
    expect(plain).not.toHaveProperty('next_claim');
  });

  it('applies a plan once, only when it is ready', async () => {
    const user = await freshUser();
    const { configuration } = await vineyardWithConfiguration(user, 'apply');
    const agent = await server.agentClient(user);
    const plan = await user.createJob({ job_type: 'PLAN', configuration_id: configuration.id });
    const early = await apiError(
      user.createJob({ job_type: 'DEPLOY', configuration_id: configuration.id, plan_job_id: plan.id }),
    );
    expect([early.status, early.code]).toEqual([409, 'plan_not_ready']);
    await agent.claimJob();
    await agent.uploadPlanArtifact(plan.id, Buffer.from('plan'), 4);
    await agent.reportStatus(plan.id, { status: 'SUCCESS' });
    const deploy = await user.createJob({
      job_type: 'DEPLOY',
      configuration_id: configuration.id,
      plan_job_id: plan.id,
    });
    expect(deploy.plan_job_id).toBe(plan.id);
    const twice = await apiError(
      user.createJob({ job_type: 'DEPLOY', configuration_id: configuration.id, plan_job_id: plan.id }),
    );
    expect([twice.status, twice.code]).toEqual([409, 'plan_already_applied']);
  });

  it('lets an agent record its own metadata only, and destroys a worker with DESTROY_WORKER', async () => {
    const user = await freshUser();
    const target = await server.agentClient(user, 'cloud-runner');
    const runner = await server.agentClient(user, 'runner');
    const metadata = { deploy: { module: 'agent-eks', region: 'eu-west-1' } };
    expect((await target.updateWorkerMetadata(target.workerId, metadata)).metadata).toEqual(metadata);
    const foreign = await apiError(runner.updateWorkerMetadata(target.workerId, {}));
    expect([foreign.status, foreign.code]).toEqual([403, 'not_this_worker']);
    expect((await runner.getWorkerForAgent(target.workerId)).metadata).toEqual(metadata);

    const job = await user.createJob({ job_type: 'DESTROY_WORKER', target_worker_id: target.workerId });
    expect(await target.claimJob()).toBeNull();
    expect((await runner.claimJob())?.job.id).toBe(job.id);
    await runner.reportStatus(job.id, { status: 'SUCCESS' });
    expect((await user.getWorker(target.workerId)).status).toBe('DESTROYED');
    expect((await apiError(target.heartbeat('1.0.0'))).status).toBe(401);
  });

  it('fails the jobs of a lost agent on the sweep timer', async () => {
    const user = await freshUser();
    const { configuration } = await vineyardWithConfiguration(user, 'lost');
    const job = await user.createJob({ job_type: 'DEPLOY', configuration_id: configuration.id });
    const agent = await server.agentClient(user);
    await agent.heartbeat('1.0.0');
    await agent.claimJob();
    clock.advance({ seconds: 121 });
    let status = (await user.getJob(job.id)).status;
    for (let i = 0; i < 50 && status === 'PROCESSING'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = (await user.getJob(job.id)).status;
    }
    const failed = await user.getJob(job.id);
    expect(failed.status).toBe('FAILED');
    expect(failed.error_message).toMatch(/agent .*lost/i);
    expect((await user.getConfiguration(configuration.id)).status).toBe('FAILED');
    const late = await apiError(agent.reportStatus(job.id, { status: 'SUCCESS' }));
    expect(late.status).toBe(409);
  });

  it('publishes releases and registers tendrils with the CI secret', async () => {
    const user = await freshUser();
    const me = await user.whoami();
    const ci = new (user.constructor as typeof TrellisClient)({
      baseUrl: server.url,
      auth: { kind: 'release', secret: RELEASE_SECRET },
    });
    const version = `2.${users}.0`;
    expect(await ci.publishRelease({ version, release_notes: 'faster claims' })).toMatchObject({ version });
    expect((await apiError(ci.publishRelease({ version, release_notes: 'again' }))).code).toBe('release_exists');
    expect((await apiError(ci.publishRelease({ version: 'v-next', release_notes: '' }))).status).toBe(400);
    expect((await user.listReleases()).map((r) => r.version)).toContain(version);
    const tendril = await ci.registerTendril({ name: 'tendril-1', owner_id: me.id, metadata: { region: 'eu' } });
    const worker = await user.getWorker(tendril.worker_id);
    expect(worker).toMatchObject({ mode: 'cloud', metadata: { region: 'eu' } });
    const unknown = await apiError(ci.registerTendril({ name: 'x', owner_id: crypto.randomUUID() }));
    expect(unknown.status).toBe(404);
    const wrong = new (user.constructor as typeof TrellisClient)({
      baseUrl: server.url,
      auth: { kind: 'release', secret: 'nope' },
    });
    expect((await apiError(wrong.publishRelease({ version: '9.9.9', release_notes: '' }))).status).toBe(401);
  });
});
