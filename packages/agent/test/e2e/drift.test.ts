import { TrellisApiError, TrellisClient } from '@trellis/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AgentProcess,
  type E2eServer,
  killLeftovers,
  startAgent,
  startServer,
  TOFU,
  vineOf,
  waitForJob,
} from '../support/e2e.js';

/**
 * Drift detection with a real agent and real OpenTofu (issue 14): a drift check of a deployed vine
 * is `in_sync` until its state is changed outside (a new state version pushed over the http
 * backend, as another tool would), and then `drifted` with the plan's counts.
 */
describe.skipIf(!TOFU)('drift checks with real OpenTofu', { timeout: 180_000 }, () => {
  let server: E2eServer;
  let agent: AgentProcess;

  beforeAll(async () => {
    server = await startServer();
    agent = await startAgent(server, { name: 'drift-agent' });
  });

  afterAll(async () => {
    await agent?.stop();
    killLeftovers();
    await server?.stop();
  });

  it('reports in_sync, then drifted after the state is edited outside; a drift plan is never deployed', async () => {
    const vine = await vineOf(server, 'drifting', 'outputs', { cluster: 'drift-eu' });
    const deploy = await server.user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id });
    expect(await waitForJob(server, deploy.id)).toMatchObject({ status: 'SUCCESS' });

    const first = await server.user.checkDrift(vine.id);
    expect(first).toMatchObject({ job_type: 'PLAN', status: 'QUEUED', trigger: { type: 'drift' } });
    const checked = await waitForJob(server, first.id);
    expect(checked.execution_metadata.plan_summary).toEqual({ add: 0, change: 0, destroy: 0 });
    const inSync = await server.user.getConfiguration(vine.id);
    expect(inSync).toMatchObject({
      status: 'DEPLOYED',
      drift: { status: 'in_sync', job_id: first.id, changes: { add: 0, change: 0, destroy: 0 } },
    });

    // Someone changes the resource outside Trellis: a new state version with another input,
    // pushed over the http backend by a second agent that holds a job of the vine meanwhile.
    const { worker_id, worker_token } = await server.user.registerAgent({ name: 'state-editor' });
    const editor = new TrellisClient({
      baseUrl: server.url,
      auth: { kind: 'worker', workerId: worker_id, workerToken: worker_token },
    });
    const hold = await server.user.createJob({
      job_type: 'PLAN',
      configuration_id: vine.id,
      assigned_worker_id: worker_id,
    });
    const claimed = await editor.claimJob();
    expect(claimed?.job.id).toBe(hold.id);
    const auth = `Basic ${Buffer.from(`${worker_id}:${worker_token}`).toString('base64')}`;
    const stateUrl = `${server.url}/api/state/${vine.id}`;
    const current = await fetch(stateUrl, { headers: { authorization: auth } });
    expect(current.status).toBe(200);
    const state = (await current.json()) as {
      serial: number;
      resources: { type: string; instances: { attributes: Record<string, unknown> }[] }[];
    };
    const resource = state.resources.find((r) => r.type === 'terraform_data');
    const attributes = resource?.instances[0]?.attributes as Record<string, unknown>;
    expect(attributes.input).toEqual({ value: 'drift-eu', type: 'string' });
    attributes.input = { value: 'changed-by-hand', type: 'string' };
    attributes.output = { value: 'changed-by-hand', type: 'string' };
    state.serial += 1;
    const pushed = await fetch(stateUrl, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: JSON.stringify(state),
    });
    expect(pushed.status).toBe(200);
    // The holding job gives the vine back as it was (DEPLOYED).
    await editor.reportStatus(hold.id, { status: 'CANCELLED', error_message: 'state edited by hand' });
    expect((await server.user.getConfiguration(vine.id)).status).toBe('DEPLOYED');

    const second = await server.user.checkDrift(vine.name);
    await waitForJob(server, second.id);
    // The result is written with the job's status, in one unit of work.
    const drifted = await server.user.getConfiguration(vine.id);
    expect(drifted.drift?.job_id).toBe(second.id);
    expect(drifted.status).toBe('DEPLOYED');
    expect(drifted.drift?.status).toBe('drifted');
    const changes = drifted.drift?.changes;
    expect((changes?.add ?? 0) + (changes?.change ?? 0) + (changes?.destroy ?? 0)).toBeGreaterThan(0);

    const refused = await server.user
      .createJob({ job_type: 'DEPLOY', configuration_id: vine.id, plan_job_id: second.id })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TrellisApiError);
    expect(refused).toMatchObject({ status: 409, code: 'plan_speculative' });
  });
});
