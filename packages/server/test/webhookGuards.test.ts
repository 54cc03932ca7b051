/**
 * What a webhook delivery may cost and do (issue 23), through the real control plane on SQLite and
 * Postgres, a person signed in with GitHub (a stand-in on loopback) and a real agent's worker
 * token: the hook URL names its connection, so a delivery costs one signature check whatever the
 * number of connections of its repository; a body is limited while it streams; manual connections
 * count against a limit; a replayed body acts once; and auto-deploy never deploys a commit that is
 * not newer than the one it deployed.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { TrellisClient } from '@trellis/client';
import type { VcsWebhookReader } from '@trellis/core';
import { GitHubWebhookReader } from '@trellis/providers';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type AgentClient, type RunningControlPlane, startControlPlane } from './support/controlPlane.js';
import { describeEachDialect } from './support/dialects.js';
import { type GitHubStandIn, signInWithGitHub, startGitHubStandIn } from './support/gitHubStandIn.js';

const FIXTURES = new URL('../../../test-fixtures/vcs/github/', import.meta.url);
const REPOSITORY = 'acme-platform/infra-live';
const SHA = (digit: string) => digit.repeat(40);

type Payload = Record<string, unknown>;
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURES), 'utf8')) as Payload;

/** The recorded push, moved to `after` (from `before`). */
function push(after: string, before: string): Payload {
  const payload = fixture('push');
  payload.before = before;
  payload.after = after;
  const head = { ...(payload.head_commit as Payload), id: after };
  payload.head_commit = head;
  payload.commits = [head];
  return payload;
}

interface Connected {
  id: string;
  url: string;
  secret: string;
}

describeEachDialect('webhook deliveries: cost and replays', (dialect) => {
  let github: GitHubStandIn;
  let plane: RunningControlPlane;
  let ada: TrellisClient;
  let agent: AgentClient;
  let vineyardId: string;
  let checks = 0;

  /** GitHub's reader, counting the signature checks deliveries cost. */
  const reader = new GitHubWebhookReader();
  const counting: VcsWebhookReader = {
    signatureCheck(headers, secret) {
      checks += 1;
      return reader.signatureCheck(headers, secret);
    },
    parse: (request) => reader.parse(request),
  };

  async function deliver(url: string, event: string, body: Buffer, secret: string, id: string = randomUUID()) {
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': event,
        'x-github-delivery': id,
        'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
      },
      body,
    });
    return { status: response.status, body: (await response.json()) as { jobs?: string[]; code?: string } };
  }

  async function connectedVine(name: string, options: { auto_deploy?: boolean; manual?: boolean } = {}) {
    const vine = await ada.createConfiguration({
      name,
      vineyard_id: vineyardId,
      source: { type: 'inline', files: { 'main.tf': 'terraform {}\n' } },
    });
    const connection = await ada.connectRepository(vine.id, {
      provider: 'github',
      repository: REPOSITORY,
      branch: 'main',
      auto_deploy: options.auto_deploy ?? false,
      webhook: options.manual ? 'manual' : 'auto',
    });
    const hook = github.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/hooks')).at(-1);
    const secret = options.manual
      ? (connection.webhook_secret as string)
      : (hook?.body?.config as { secret: string } | undefined)?.secret;
    if (secret === undefined) throw new Error('no webhook secret: the hook was not created');
    return { id: vine.id, url: connection.webhook_url, secret } satisfies Connected;
  }

  /** The agent claims `jobId`, uploads a plan for a PLAN, and reports success with one change. */
  async function succeed(jobId: string) {
    const claimed = await agent.claimJob();
    expect(claimed?.job.id).toBe(jobId);
    if (claimed?.job.job_type === 'PLAN') {
      const plan = new TextEncoder().encode('a plan');
      await agent.uploadPlanArtifact(jobId, plan, plan.length);
    }
    await agent.reportStatus(jobId, {
      status: 'SUCCESS',
      execution_metadata: { plan_summary: { add: 1, change: 0, destroy: 0 } },
    });
  }

  beforeAll(async () => {
    github = await startGitHubStandIn();
    const person = github.addPerson('ada-lovelace', 41001);
    plane = await startControlPlane(dialect, {
      env: { ...github.env, TRELLIS_MAX_MANUAL_VCS_CONNECTIONS: '2' },
      register: {
        vcs: { github: { ...(github.vcs.github as NonNullable<typeof github.vcs.github>), webhooks: counting } },
      },
    });
    ada = await signInWithGitHub(plane.controlPlane.config.webUrl, person);
    agent = await plane.agentClient(ada, 'webhook-agent');
    vineyardId = (await ada.createVineyard('hooks')).id;
  });
  afterAll(async () => {
    await plane?.close();
    await github?.stop();
  });

  it('one signature check per delivery, with the secret of the connection its URL names only', async () => {
    const vines: Connected[] = [];
    for (let i = 0; i < 6; i += 1) vines.push(await connectedVine(`same-repo-${i}`));
    const [first, second] = vines as [Connected, Connected];
    const body = Buffer.from(JSON.stringify(push(SHA('a'), SHA('0'))));

    checks = 0;
    const answer = await deliver(first.url, 'push', body, first.secret);
    expect(answer.status).toBe(202);
    expect(answer.body.jobs).toHaveLength(1);
    expect((await ada.getJob(answer.body.jobs?.[0] as string)).vine_id).toBe(first.id);
    expect(checks).toBe(1);

    // Another connection's secret on this URL is not this connection's: refused, one check.
    checks = 0;
    const crossed = await deliver(first.url, 'push', body, second.secret);
    expect(crossed.status).toBe(401);
    expect(crossed.body.code).toBe('webhook_signature_invalid');
    expect(checks).toBe(1);
    expect(await ada.listJobs({ vine_id: second.id })).toEqual([]);
    await ada.cancelJob(answer.body.jobs?.[0] as string);
  });

  it('the URL must name a connection; an unknown one costs nothing; a body over the limit is 413', async () => {
    const body = Buffer.from(JSON.stringify(push(SHA('b'), SHA('0'))));
    const bare = await deliver(`${plane.url}/api/webhooks/github`, 'push', body, 'whatever');
    expect(bare.status).toBe(400);
    expect(bare.body.code).toBe('validation_failed');
    checks = 0;
    const unknown = await deliver(`${plane.url}/api/webhooks/github?vine=${randomUUID()}`, 'push', body, 'whatever');
    expect(unknown).toEqual({ status: 202, body: { accepted: true, jobs: [] } });
    expect(checks).toBe(0);
    const vine = await connectedVine('too-large');
    const huge = Buffer.alloc(25 * 1024 * 1024 + 1, 0x20);
    const answer = await deliver(vine.url, 'push', huge, vine.secret);
    expect(answer.status).toBe(413);
    expect(answer.body.code).toBe('webhook_too_large');
  });

  it('manual webhooks count against the per-owner limit (409 vcs_connection_limit); automatic ones do not', async () => {
    const one = await connectedVine('manual-1', { manual: true });
    await connectedVine('manual-2', { manual: true });
    await expect(connectedVine('manual-3', { manual: true })).rejects.toMatchObject({
      status: 409,
      code: 'vcs_connection_limit',
    });
    // Reconnecting a manual one replaces it; an automatic webhook proves access and is not counted.
    await expect(
      ada.connectRepository(one.id, { provider: 'github', repository: REPOSITORY, branch: 'main', webhook: 'manual' }),
    ).resolves.toMatchObject({ webhook_mode: 'manual' });
    await expect(connectedVine('automatic-after-the-limit')).resolves.toMatchObject({ url: expect.any(String) });
  });

  it('a replayed body under a new delivery id queues nothing', async () => {
    const vine = await connectedVine('replayed');
    const body = Buffer.from(JSON.stringify(push(SHA('c'), SHA('0'))));
    const first = await deliver(vine.url, 'push', body, vine.secret);
    expect(first.body.jobs).toHaveLength(1);
    const replayed = await deliver(vine.url, 'push', body, vine.secret, randomUUID());
    expect(replayed).toEqual({ status: 202, body: { accepted: true, jobs: [] } });
    expect(await ada.listJobs({ vine_id: vine.id })).toHaveLength(1);
    await agent.reportStatus((await agent.claimJob())?.job.id as string, { status: 'CANCELLED' });
  });

  it('auto-deploy deploys a newer commit, never one the provider says is not newer than the deployed one', async () => {
    const vine = await connectedVine('auto', { auto_deploy: true });
    const deploys = async () => (await ada.listJobs({ vine_id: vine.id })).filter((job) => job.job_type === 'DEPLOY');

    const planned = await deliver(vine.url, 'push', Buffer.from(JSON.stringify(push(SHA('2'), SHA('1')))), vine.secret);
    const planId = planned.body.jobs?.[0] as string;
    expect((await ada.getJob(planId)).trigger).toMatchObject({ commit_sha: SHA('2'), ancestry: 'newer' });
    await succeed(planId);
    const [deploy] = await deploys();
    expect(deploy).toMatchObject({ plan_job_id: planId });
    await succeed(deploy?.id as string);

    // An older push (signed: a provider's redelivery, or a force push back) after the deploy.
    github.relations.set(`${SHA('2')}...${SHA('1')}`, 'behind');
    const older = await deliver(vine.url, 'push', Buffer.from(JSON.stringify(push(SHA('1'), SHA('0')))), vine.secret);
    const olderId = older.body.jobs?.[0] as string;
    expect(github.requests.some((r) => r.path.endsWith(`/compare/${SHA('2')}...${SHA('1')}`))).toBe(true);
    expect((await ada.getJob(olderId)).trigger).toMatchObject({ commit_sha: SHA('1'), ancestry: 'not_newer' });
    const log = (await ada.getJobLogs(olderId)).logs.map((chunk) => chunk.log_chunk).join('');
    expect(log).toContain(`auto-deploy will not deploy this plan: commit ${SHA('1')} is not newer than ${SHA('2')}`);
    await succeed(olderId);
    expect(await deploys()).toHaveLength(1);

    // A newer commit is deployed again.
    const newer = await deliver(vine.url, 'push', Buffer.from(JSON.stringify(push(SHA('3'), SHA('2')))), vine.secret);
    await succeed(newer.body.jobs?.[0] as string);
    expect((await deploys()).map((job) => job.plan_job_id)).toContain(newer.body.jobs?.[0]);
  });
});
