/**
 * Messages for people (issue 25 item 7) over HTTP on SQLite and Postgres: a refused field in
 * words, the names of a deploy's sensitive outputs (never their values), and a destroyed vine's
 * drift forgotten.
 */
import type { TrellisClient } from '@trellis/client';
import { afterEach, expect, it } from 'vitest';
import {
  type AgentClient,
  type RunningControlPlane,
  startControlPlane,
  vineyardWithConfiguration,
} from './support/controlPlane.js';
import { describeEachDialect } from './support/dialects.js';

const opened: RunningControlPlane[] = [];
afterEach(async () => {
  for (const plane of opened.splice(0)) await plane.close();
});

async function run(
  user: TrellisClient,
  agent: AgentClient,
  job: { id: string },
  metadata: Record<string, unknown> = {},
) {
  expect((await agent.claimJob())?.job.id).toBe(job.id);
  await agent.reportStatus(job.id, { status: 'SUCCESS', execution_metadata: metadata });
  return user.getJob(job.id);
}

describeEachDialect('messages for people', (dialect) => {
  it('says a refused field in words, keeps only the names of sensitive outputs, and forgets the drift of a destroyed vine', async () => {
    const plane = await startControlPlane(dialect);
    opened.push(plane);
    const user = await plane.userClient();
    const agent = await plane.agentClient(user);
    const { configuration: vine } = await vineyardWithConfiguration(user, 'messages');

    const refused = await fetch(`${plane.url}/api/cli/configurations/${vine.id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${await plane.accessToken()}`, 'content-type': 'application/json' },
      body: JSON.stringify({ drift_detection: { interval_minutes: 59 } }),
    });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      code: 'validation_failed',
      detail: 'drift_detection.interval_minutes must be at least 60 minutes',
      errors: [{ path: 'body.drift_detection.interval_minutes', message: 'must be at least 60 minutes' }],
    });

    await run(user, agent, await user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id }), {
      outputs: {
        region: { value: 'eu-west-1', type: 'string', sensitive: false },
        db_password: { value: 'hunter2', type: 'string', sensitive: true },
      },
      sensitive_outputs: ['db_password', 'api_token'],
    });
    const deployed = await user.getConfiguration(vine.id);
    expect(deployed.components.outputs).toMatchObject({
      values: { region: 'eu-west-1' },
      sensitive: ['api_token', 'db_password'],
    });
    expect(JSON.stringify(deployed)).not.toContain('hunter2');

    await run(user, agent, await user.checkDrift(vine.id), { plan_summary: { add: 0, change: 1, destroy: 0 } });
    expect((await user.getConfiguration(vine.id)).drift).toMatchObject({ status: 'drifted' });
    await run(user, agent, await user.createJob({ job_type: 'DESTROY', configuration_id: vine.id }));
    const destroyed = await user.getConfiguration(vine.id);
    expect(destroyed).toMatchObject({ status: 'DESTROYED', drift: null });
    expect(destroyed.components).toEqual({ cluster: null, argocd: null, outputs: null });
  });
});
