/**
 * Feedback at the git provider (issue 13) through the real control plane, GitHub's API answered
 * by nock: a pull request's PLAN (created through the stores, as the webhook path does) gets a
 * pending commit status when queued; once an agent reports SUCCESS through the agent API, the
 * delivery worker sends the success status with the job's page and creates the plan comment; the
 * next plan of the same pull request edits that same comment (PATCH), never a new one. A GitHub
 * outage is retried and the job stays SUCCESS. A signed pull request webhook gets the same feedback.
 * The server's own interval worker logs each attempt without the token.
 */
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { TrellisClient } from '@trellis/client';
import {
  type Clock,
  coreServices,
  type CoreSettings,
  type Job,
  type Random,
  type SecretBox,
  sealProviderTokens,
  systemScope,
  type UnitOfWork,
  type VcsJobTrigger,
} from '@trellis/core';
import { pullRequestTrigger, queueGitJob, tarGz } from '@trellis/testkit';
import nock from 'nock';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import {
  type AgentClient,
  type RunningControlPlane,
  startControlPlane,
  vineyardWithConfiguration,
} from './support/controlPlane.js';
import { describeEachDialect } from './support/dialects.js';

const TOKEN = 'gho_feedback_person_token';
const HEAD_1 = '1'.repeat(40);
const HEAD_2 = '2'.repeat(40);

describeEachDialect('feedback at the git provider', (dialect) => {
  let server: RunningControlPlane;
  let client: TrellisClient;
  let agent: AgentClient;
  let uow: UnitOfWork;
  let userId: string;
  let web: string;

  beforeAll(async () => {
    nock.disableNetConnect();
    nock.enableNetConnect(/^(127\.0\.0\.1|localhost)(:\d+)?$/);
    server = await startControlPlane(dialect, {
      env: {
        TRELLIS_GITHUB_CLIENT_ID: 'github-client',
        TRELLIS_GITHUB_CLIENT_SECRET: 'github-secret',
        // The test runs the delivery worker's rounds itself.
        TRELLIS_OUTBOX_INTERVAL_S: '3600',
      },
    });
    web = server.controlPlane.config.webUrl;
    client = await server.userClient('ada@example.test');
    agent = await server.agentClient(client, 'runner');
    await agent.heartbeat('1.0.0');
    userId = (await server.controlPlane.useCases.auth.ensureUser({ email: 'ada@example.test' })).id;
    const secrets = server.controlPlane.container.resolve<SecretBox>(coreServices.secretBox.id);
    uow = server.controlPlane.container.resolve<UnitOfWork>(coreServices.unitOfWork.id);
    const sealed = await sealProviderTokens(
      secrets,
      { provider: 'github', provider_user_id: '583231' },
      { accessToken: TOKEN, refreshToken: null, expiresAt: null },
    );
    await uow.run(systemScope, (stores) =>
      stores.identities.upsert({
        user_id: userId,
        provider: 'github',
        provider_user_id: '583231',
        provider_token: sealed,
        scopes: 'repo',
      }),
    );
  });
  afterAll(async () => {
    await server?.close();
    nock.enableNetConnect();
  });
  afterEach(() => {
    nock.cleanAll();
  });

  const pullRequest = (head: string) => pullRequestTrigger(head);

  async function queueGitPlan(vineId: string, trigger: VcsJobTrigger): Promise<Job> {
    const c = server.controlPlane.container;
    const deps = {
      clock: c.resolve<Clock>(coreServices.clock.id),
      random: c.resolve<Random>(coreServices.random.id),
      settings: c.resolve<CoreSettings>(coreServices.settings.id),
    };
    return queueGitJob(uow, deps, { ownerId: userId, vineId, trigger });
  }

  async function runPlan(job: Job, metadata: Record<string, unknown>): Promise<void> {
    // The claim fetches the commit's tarball (issue 23): GitHub answers it, whatever the ref.
    nock('https://api.github.com', { reqheaders: { authorization: `Bearer ${TOKEN}` } })
      .get(/\/tarball\//)
      .reply(200, tarGz([{ path: 'acme-infra-0123abc/main.tf', content: 'terraform {}\n' }]));
    const claimed = await agent.claimJob();
    expect(claimed?.job.id).toBe(job.id);
    await agent.reportStatus(job.id, { status: 'PROCESSING' });
    await agent.reportStatus(job.id, { status: 'SUCCESS', execution_metadata: metadata });
  }

  const github = () => nock('https://api.github.com', { reqheaders: { authorization: `Bearer ${TOKEN}` } });
  const deliver = () => server.controlPlane.useCases.vcsFeedback.deliverDue();

  it('pending status, then success and the plan comment; the next plan edits the same comment', async () => {
    const { vineyard, configuration } = await vineyardWithConfiguration(client, 'feedback');
    await client.connectRepository(configuration.name, {
      provider: 'github',
      repository: 'acme/infra',
      branch: 'main',
      webhook: 'manual',
    });
    const context = `trellis/${vineyard.name}/${configuration.name}`;
    const statuses: unknown[] = [];
    const comments: { method: string; path: string; body: { body: string } }[] = [];

    const first = await queueGitPlan(configuration.id, pullRequest(HEAD_1));
    const pending = github()
      .post(`/repos/acme/infra/statuses/${HEAD_1}`, (body) => statuses.push(body) > 0)
      .reply(201, { id: 1 });
    expect(await deliver()).toMatchObject([{ kind: 'status', status: 'delivered' }]);
    expect(pending.isDone()).toBe(true);
    expect(statuses[0]).toEqual({
      state: 'pending',
      context,
      description: 'Plan queued',
      target_url: `${web}/jobs/${first.id}`,
    });

    await runPlan(first, {
      plan_summary: { add: 1, change: 0, destroy: 0 },
      resource_changes: [{ address: 'aws_subnet.b', actions: ['create'] }],
      resource_changes_omitted: 0,
    });
    const ended = github()
      .post(`/repos/acme/infra/statuses/${HEAD_1}`, (body) => statuses.push(body) > 0)
      .reply(201, { id: 2 })
      .post('/repos/acme/infra/issues/7/comments', (body) => comments.push({ method: 'POST', path: '', body }) > 0)
      .reply(201, { id: 555 });
    expect((await deliver()).map((r) => [r.kind, r.status])).toEqual([
      ['status', 'delivered'],
      ['comment', 'delivered'],
    ]);
    expect(ended.isDone()).toBe(true);
    expect(statuses[1]).toEqual({
      state: 'success',
      context,
      description: 'Plan: +1 ~0 -0',
      target_url: `${web}/jobs/${first.id}`,
    });
    expect(comments[0]?.body.body).toContain(`### Trellis plan: \`${configuration.name}\` in \`${vineyard.name}\``);
    expect(comments[0]?.body.body).toContain('| + create | `aws_subnet.b` |');
    expect(comments[0]?.body.body).toContain(`${web}/jobs/${first.id}`);
    const feedback = await client.getJobVcsFeedback(first.id);
    expect(feedback.map((f) => [f.kind, f.status, f.state])).toEqual([
      ['status', 'delivered', 'pending'],
      ['status', 'delivered', 'success'],
      ['comment', 'delivered', null],
    ]);

    // The second push to the pull request: GitHub is down for the first try of its status.
    const second = await queueGitPlan(configuration.id, pullRequest(HEAD_2));
    github().post(`/repos/acme/infra/statuses/${HEAD_2}`).reply(502, 'Bad Gateway');
    const [retrying] = await deliver();
    expect(retrying).toMatchObject({ kind: 'status', status: 'pending', attempts: 1 });
    expect(retrying?.error).not.toContain(TOKEN);
    expect((await client.getJobVcsFeedback(second.id))[0]).toMatchObject({ status: 'pending', attempts: 1 });
    expect(nock.isDone()).toBe(true);

    await runPlan(second, {
      plan_summary: { add: 0, change: 1, destroy: 0 },
      resource_changes: [{ address: 'aws_subnet.b', actions: ['update'] }],
    });
    expect((await client.getJob(second.id)).status).toBe('SUCCESS');
    const edit = github()
      .post(`/repos/acme/infra/statuses/${HEAD_2}`, (body) => statuses.push(body) > 0)
      .reply(201, { id: 3 })
      .patch(
        '/repos/acme/infra/issues/comments/555',
        (body) => comments.push({ method: 'PATCH', path: '555', body }) > 0,
      )
      .reply(200, { id: 555 });
    // The end's status goes at once (the retried pending one, not due yet, will be superseded by
    // it and never sent); the comment is edited in place.
    const reports = await deliver();
    expect(reports.map((r) => [r.kind, r.status])).toEqual([
      ['status', 'delivered'],
      ['comment', 'delivered'],
    ]);
    expect(edit.isDone()).toBe(true);
    expect(statuses.at(-1)).toMatchObject({ state: 'success', description: 'Plan: +0 ~1 -0' });
    expect(comments.map((c) => c.method)).toEqual(['POST', 'PATCH']);
    expect(comments[1]?.body.body).toContain('| ~ update | `aws_subnet.b` |');
  });
  it('a signed pull request webhook: pending at once, then success and the comment on that pull request', async () => {
    const { configuration } = await vineyardWithConfiguration(client, 'webhook-fed');
    const connected = await client.connectRepository(configuration.name, {
      provider: 'github',
      repository: 'acme-platform/infra-live',
      branch: 'main',
      webhook: 'manual',
    });
    const body = readFileSync(new URL('../../../test-fixtures/vcs/github/pull_request-opened.json', import.meta.url));
    const head = '8b0baff713ddef5e79d9db0f3fa713ee8bd94512';
    const signature = createHmac('sha256', connected.webhook_secret as string)
      .update(body)
      .digest('hex');
    const answer = await fetch(connected.webhook_url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'pull_request',
        'x-github-delivery': 'feedback-delivery-1',
        'x-hub-signature-256': `sha256=${signature}`,
      },
      body,
    });
    expect(answer.status).toBeLessThan(300);
    const [job] = (await client.listJobs()).filter((listed) => listed.vine_id === configuration.id);
    expect(job?.trigger).toMatchObject({ type: 'pull_request', number: 42, head_sha: head });
    const statuses: { state?: string; description?: string; target_url?: string }[] = [];
    const repo = '/repos/acme-platform/infra-live';
    const pending = github()
      .post(`${repo}/statuses/${head}`, (sent) => statuses.push(sent) > 0)
      .reply(201, {});
    await deliver();
    expect(pending.isDone()).toBe(true);
    expect(statuses[0]).toMatchObject({ state: 'pending', target_url: `${web}/jobs/${job?.id}` });

    await runPlan(job as unknown as Job, { plan_summary: { add: 0, change: 0, destroy: 0 }, resource_changes: [] });
    let comment = '';
    const ended = github()
      .post(`${repo}/statuses/${head}`, (sent) => statuses.push(sent) > 0)
      .reply(201, {})
      .post(`${repo}/issues/42/comments`, (sent: { body: string }) => {
        comment = sent.body;
        return true;
      })
      .reply(201, { id: 4242 });
    await deliver();
    expect(ended.isDone()).toBe(true);
    expect(statuses[1]).toMatchObject({ state: 'success', description: 'Plan: +0 ~0 -0' });
    expect(comment).toContain('No changes.');
  });
});

describeEachDialect('the feedback worker of the server', (dialect) => {
  it('runs on its interval and logs each attempt with the job and the reason, never the token', async () => {
    nock.disableNetConnect();
    nock.enableNetConnect(/^(127\.0\.0\.1|localhost)(:\d+)?$/);
    const logs: { level: string; data: Record<string, unknown>; message?: string }[] = [];
    const record = (level: string) => (data: object, message?: string) => {
      logs.push({ level, data: data as Record<string, unknown>, ...(message === undefined ? {} : { message }) });
    };
    const server = await startControlPlane(dialect, {
      env: {
        TRELLIS_GITHUB_CLIENT_ID: 'github-client',
        TRELLIS_GITHUB_CLIENT_SECRET: 'github-secret',
        TRELLIS_OUTBOX_INTERVAL_S: '1',
      },
      logger: { info: record('info'), warn: record('warn'), error: record('error') },
    });
    try {
      const client = await server.userClient('bo@example.test');
      const userId = (await server.controlPlane.useCases.auth.ensureUser({ email: 'bo@example.test' })).id;
      const c = server.controlPlane.container;
      const uow = c.resolve<UnitOfWork>(coreServices.unitOfWork.id);
      const sealed = await sealProviderTokens(
        c.resolve<SecretBox>(coreServices.secretBox.id),
        { provider: 'github', provider_user_id: '9' },
        { accessToken: TOKEN, refreshToken: null, expiresAt: null },
      );
      await uow.run(systemScope, (stores) =>
        stores.identities.upsert({
          user_id: userId,
          provider: 'github',
          provider_user_id: '9',
          provider_token: sealed,
          scopes: 'repo',
        }),
      );
      const { configuration } = await vineyardWithConfiguration(client, 'logged');
      await client.connectRepository(configuration.name, {
        provider: 'github',
        repository: 'acme/infra',
        branch: 'main',
        webhook: 'manual',
      });
      nock('https://api.github.com')
        .post(`/repos/acme/infra/statuses/${HEAD_1}`)
        .reply(403, { message: 'Must have push access' });
      const job = await queueGitJob(
        uow,
        {
          clock: c.resolve<Clock>(coreServices.clock.id),
          random: c.resolve<Random>(coreServices.random.id),
          settings: c.resolve<CoreSettings>(coreServices.settings.id),
        },
        { ownerId: userId, vineId: configuration.id, trigger: pullRequestTrigger(HEAD_1) },
      );
      const logged = () => logs.find((entry) => entry.message === 'git provider feedback not delivered');
      for (let tries = 0; !logged() && tries < 600; tries++) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(logged()?.level).toBe('warn');
      expect(logged()?.data).toMatchObject({
        job_id: job.id,
        provider: 'github',
        kind: 'status',
        status: 'pending',
        attempts: 1,
      });
      expect(String(logged()?.data.error)).toContain('vcs_permission_missing');
      expect(JSON.stringify(logs)).not.toContain(TOKEN);
      expect((await client.getJob(job.id)).status).toBe('QUEUED');
    } finally {
      await server.close();
      nock.cleanAll();
      nock.enableNetConnect();
    }
  });
});
