import type { TrellisClient } from '@trellis/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  type AgentClient,
  type RunningControlPlane,
  startControlPlane,
  vineyardWithConfiguration,
} from './support/controlPlane.js';
import { describeEachDialect } from './support/dialects.js';

function basic(agent: AgentClient): string {
  return `Basic ${Buffer.from(`${agent.workerId}:${agent.workerToken}`).toString('base64')}`;
}

const state = (serial: number) =>
  JSON.stringify({ version: 4, terraform_version: '1.12.6', serial, lineage: 'lineage-1', outputs: {}, resources: [] });

describeEachDialect('the OpenTofu/Terraform http state backend', (dialect) => {
  let server: RunningControlPlane;
  let user: TrellisClient;

  beforeAll(async () => {
    server = await startControlPlane(dialect);
    user = await server.userClient('state@example.com');
  });
  afterAll(async () => {
    await server?.close();
  });

  async function running(name: string) {
    const { configuration } = await vineyardWithConfiguration(user, name);
    const job = await user.createJob({ job_type: 'PLAN', configuration_id: configuration.id });
    const agent = await server.agentClient(user, `${name}-agent`);
    expect((await agent.claimJob())?.job.id).toBe(job.id);
    return { configuration, job, agent, url: `${server.url}/api/state/${configuration.id}` };
  }

  it('reads nothing, then stores and serves versions, with Basic auth as the engine sends it', async () => {
    const { agent, url } = await running('basic');
    expect((await fetch(url, { headers: { authorization: basic(agent) } })).status).toBe(204);
    const put = await fetch(url, {
      method: 'POST',
      headers: { authorization: basic(agent), 'content-type': 'application/json' },
      body: state(1),
    });
    expect(put.status).toBe(200);
    await fetch(url, { method: 'POST', headers: { authorization: basic(agent) }, body: state(2) });
    const got = await fetch(url, { headers: { authorization: basic(agent) } });
    expect(got.status).toBe(200);
    expect(JSON.parse(await got.text()).serial).toBe(2);
    expect(got.headers.get('etag')).toMatch(/^"[0-9a-f]{64}"$/);
    const bad = await fetch(url, { method: 'POST', headers: { authorization: basic(agent) }, body: 'not json' });
    expect([bad.status, (await bad.json()).code]).toEqual([400, 'invalid_state']);
  });

  it('locks with LOCK, answers 423 with the holder, and requires the lock id to write and unlock', async () => {
    const { agent, url } = await running('locks');
    const headers = { authorization: basic(agent), 'content-type': 'application/json' };
    const lockA = { ID: 'lock-a', Operation: 'OperationTypeApply', Who: 'agent@host', Version: '1.12.6' };
    expect((await fetch(url, { method: 'LOCK', headers, body: JSON.stringify(lockA) })).status).toBe(200);
    const taken = await fetch(url, { method: 'LOCK', headers, body: JSON.stringify({ ...lockA, ID: 'lock-b' }) });
    expect(taken.status).toBe(423);
    expect((await taken.json()).ID).toBe('lock-a');
    const unlocked = await fetch(`${url}?ID=lock-b`, { method: 'POST', headers, body: state(5) });
    expect([unlocked.status, (await unlocked.json()).code]).toEqual([409, 'state_locked']);
    expect((await fetch(`${url}?ID=lock-a`, { method: 'POST', headers, body: state(5) })).status).toBe(200);
    const mismatch = await fetch(url, { method: 'UNLOCK', headers, body: JSON.stringify({ ID: 'lock-b' }) });
    expect(mismatch.status).toBe(409);
    expect((await mismatch.json()).ID).toBe('lock-a');
    expect((await fetch(url, { method: 'UNLOCK', headers, body: JSON.stringify({ ID: 'lock-a' }) })).status).toBe(200);
    expect((await fetch(url, { method: 'POST', headers, body: state(6) })).status).toBe(200);
  });

  it('is only for the agent running a job of that vine', async () => {
    const { agent, url, job } = await running('owner-only');
    const idle = await server.agentClient(user, 'idle-agent');
    const forbidden = await fetch(url, { headers: { authorization: basic(idle) } });
    expect([forbidden.status, (await forbidden.json()).code]).toEqual([403, 'state_not_for_worker']);
    const wrongPassword = `Basic ${Buffer.from(`${agent.workerId}:nope`).toString('base64')}`;
    expect((await fetch(url, { headers: { authorization: wrongPassword } })).status).toBe(401);
    const stranger = await server.agentClient(await server.userClient('other@example.com'), 'stranger');
    expect((await fetch(url, { headers: { authorization: basic(stranger) } })).status).toBe(404);
    await agent.reportStatus(job.id, { status: 'SUCCESS' });
    expect((await fetch(url, { headers: { authorization: basic(agent) } })).status).toBe(403);
  });
});
