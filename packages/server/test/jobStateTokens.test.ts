import type { TrellisClient } from '@trellis/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  type AgentClient,
  type RunningControlPlane,
  startControlPlane,
  vineyardWithConfiguration,
} from './support/controlPlane.js';
import { describeEachDialect } from './support/dialects.js';

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

const state = (serial: number) =>
  JSON.stringify({ version: 4, terraform_version: '1.12.6', serial, lineage: 'lineage-1', outputs: {}, resources: [] });

/** Issue 10, finding 10: the engine gets a credential for one job's state, not the worker token. */
describeEachDialect('job state tokens for the http state backend', (dialect) => {
  let server: RunningControlPlane;
  let user: TrellisClient;
  let agent: AgentClient;

  beforeAll(async () => {
    server = await startControlPlane(dialect);
    user = await server.userClient('tokens@example.com');
    agent = await server.agentClient(user, 'token-agent');
  });
  afterAll(async () => {
    await server?.close();
  });

  async function claimed(name: string) {
    const { configuration } = await vineyardWithConfiguration(user, name);
    const job = await user.createJob({ job_type: 'PLAN', configuration_id: configuration.id });
    const claim = await agent.claimJob();
    expect(claim?.job.id).toBe(job.id);
    const token = claim?.state_token as string;
    return { vineId: configuration.id, job, token, url: `${server.url}/api/state/${configuration.id}` };
  }

  async function answer(url: string, authorization: string, init: RequestInit = {}) {
    const response = await fetch(url, { ...init, headers: { authorization, ...init.headers } });
    const text = await response.text();
    return { status: response.status, code: text ? (JSON.parse(text) as { code?: string }).code : undefined };
  }

  it('hands out a token with the claim that reads, writes and locks only its job’s state', async () => {
    const a = await claimed('token-a');
    expect(a.token).toMatch(/^trj_/);
    expect(a.token).not.toContain(agent.workerToken);
    const auth = basic(agent.workerId, a.token);
    expect((await answer(a.url, auth)).status).toBe(204);
    expect((await answer(a.url, auth, { method: 'POST', body: state(1) })).status).toBe(200);
    const lock = JSON.stringify({ ID: 'lock-1', Operation: 'OperationTypePlan' });
    expect(
      (await answer(a.url, auth, { method: 'LOCK', body: lock, headers: { 'content-type': 'application/json' } }))
        .status,
    ).toBe(200);
    expect(
      (await answer(a.url, auth, { method: 'UNLOCK', body: lock, headers: { 'content-type': 'application/json' } }))
        .status,
    ).toBe(200);

    // Another vine whose job the same worker runs: this token does not open it.
    const b = await claimed('token-b');
    expect(await answer(b.url, auth)).toEqual({ status: 401, code: 'invalid_state_token' });
    expect((await answer(b.url, basic(agent.workerId, b.token))).status).toBe(204);

    // Another worker, a tampered token: refused.
    const other = await server.agentClient(user, 'other-agent');
    expect(await answer(a.url, basic(other.workerId, a.token))).toEqual({ status: 401, code: 'invalid_state_token' });
    // One character of the tag changed (not the last: its low bits carry nothing, so a change
    // there can decode to the same bytes, one time in 256).
    const at = a.token.length - 5;
    const tampered = `${a.token.slice(0, at)}${a.token[at] === 'A' ? 'B' : 'A'}${a.token.slice(at + 1)}`;
    expect(await answer(a.url, basic(agent.workerId, tampered))).toEqual({
      status: 401,
      code: 'invalid_state_token',
    });
    await agent.reportStatus(b.job.id, { status: 'SUCCESS' });
  });

  it('ends with its job, even when the worker runs the next job of the same vine', async () => {
    const first = await claimed('token-end');
    const auth = basic(agent.workerId, first.token);
    expect((await answer(first.url, auth)).status).toBe(204);
    await agent.reportStatus(first.job.id, { status: 'SUCCESS' });
    expect(await answer(first.url, auth)).toEqual({ status: 403, code: 'state_not_for_worker' });

    const next = await user.createJob({ job_type: 'PLAN', configuration_id: first.vineId });
    const claim = await agent.claimJob();
    expect(claim?.job.id).toBe(next.id);
    expect(await answer(first.url, auth)).toEqual({ status: 403, code: 'state_not_for_worker' });
    expect((await answer(first.url, basic(agent.workerId, claim?.state_token as string))).status).toBe(204);
    await agent.reportStatus(next.id, { status: 'SUCCESS' });
  });
});
