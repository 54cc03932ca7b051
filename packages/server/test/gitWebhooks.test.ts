import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { TrellisClient } from '@trellis/client';
import { coreServices, type GitProvider, sealProviderTokens, sealWebhookSecret, systemScope } from '@trellis/core';
import nock from 'nock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { resolve } from '../src/container.js';
import { type RunningControlPlane, startControlPlane } from './support/controlPlane.js';
import { describeEachDialect } from './support/dialects.js';

const FIXTURES = new URL('../../../test-fixtures/vcs/', import.meta.url);
const BITBUCKET_TOKEN = 'bb-access-token-4f1e';
/** The full commit of the Bitbucket pull request fixture's head (`6ee7fa980f7b`). */
const BITBUCKET_PR_HEAD = '6ee7fa980f7b3c1d2e4f5a6b7c8d9e0f1a2b3c4d';
const payload = (provider: GitProvider, name: string) => readFileSync(new URL(`${provider}/${name}.json`, FIXTURES));

const SECRET = 'whsec-test-2b7c41e09a';

const hmac = (body: Buffer, secret: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

interface ProviderCase {
  provider: GitProvider;
  repository: string;
  push: { event: string; fixture: string; commit: string };
  pullRequest: { event: string; fixture: string; number: number };
  ping: { event: string; fixture: string };
  /** The headers of a delivery, signed with `secret` (null: no signature). */
  headers(event: string, id: string, body: Buffer, secret: string | null): Record<string, string>;
}

const CASES: ProviderCase[] = [
  {
    provider: 'github',
    repository: 'acme-platform/infra-live',
    push: { event: 'push', fixture: 'push', commit: '8457785ada4ab6182c16fbac60586081edf51999' },
    pullRequest: { event: 'pull_request', fixture: 'pull_request-opened', number: 42 },
    ping: { event: 'ping', fixture: 'ping' },
    headers: (event, id, body, secret) => ({
      'x-github-event': event,
      'x-github-delivery': id,
      ...(secret === null ? {} : { 'x-hub-signature-256': hmac(body, secret) }),
    }),
  },
  {
    provider: 'gitlab',
    repository: 'acme/platform/infra-live',
    push: { event: 'Push Hook', fixture: 'push', commit: 'd2d75d0a629f330208a3dd1e65620783162dd415' },
    pullRequest: { event: 'Merge Request Hook', fixture: 'merge_request-open', number: 17 },
    ping: { event: 'Note Hook', fixture: 'note' },
    headers: (event, id, _body, secret) => ({
      'x-gitlab-event': event,
      'x-gitlab-event-uuid': id,
      ...(secret === null ? {} : { 'x-gitlab-token': secret }),
    }),
  },
  {
    provider: 'bitbucket',
    repository: 'acme-ops/infra-live',
    push: { event: 'repo:push', fixture: 'push', commit: '0633961195c27d9d2445e233f84cf07b07986fab' },
    pullRequest: { event: 'pullrequest:created', fixture: 'pullrequest-created', number: 9 },
    ping: { event: 'pullrequest:fulfilled', fixture: 'pullrequest-fulfilled' },
    headers: (event, id, body, secret) => ({
      'x-event-key': event,
      'x-request-uuid': id,
      ...(secret === null ? {} : { 'x-hub-signature': hmac(body, secret) }),
    }),
  },
];

describeEachDialect('git webhooks', (dialect) => {
  let plane: RunningControlPlane;
  let client: TrellisClient;
  let deliveries = 0;

  beforeAll(async () => {
    plane = await startControlPlane(dialect, {
      env: {
        TRELLIS_GITHUB_CLIENT_ID: 'gh-client',
        TRELLIS_GITHUB_CLIENT_SECRET: 'gh-secret',
        TRELLIS_GITLAB_CLIENT_ID: 'gl-client',
        TRELLIS_GITLAB_CLIENT_SECRET: 'gl-secret',
        TRELLIS_BITBUCKET_CLIENT_ID: 'bb-client',
        TRELLIS_BITBUCKET_CLIENT_SECRET: 'bb-secret',
      },
    });
    client = await plane.userClient('ada@example.test');
    // The connecting person's Bitbucket token, for the commit API (Bitbucket's pull requests name
    // their head by 12 characters).
    const userId = (await plane.controlPlane.useCases.auth.ensureUser({ email: 'ada@example.test' })).id;
    const secrets = resolve(plane.controlPlane.container, coreServices.secretBox);
    const uow = resolve(plane.controlPlane.container, coreServices.unitOfWork);
    const sealed = await sealProviderTokens(
      secrets,
      { provider: 'bitbucket', provider_user_id: '{b7d2c1e0}' },
      { accessToken: BITBUCKET_TOKEN, refreshToken: null, expiresAt: null },
    );
    await uow.run(systemScope, (stores) =>
      stores.identities.upsert({
        user_id: userId,
        provider: 'bitbucket',
        provider_user_id: '{b7d2c1e0}',
        provider_token: sealed,
        scopes: 'repository pullrequest webhook',
      }),
    );
    nock.disableNetConnect();
    nock.enableNetConnect(/^(127\.0\.0\.1|localhost)(:\d+)?$/);
  });
  afterEach(() => {
    nock.cleanAll();
  });
  afterAll(async () => {
    nock.enableNetConnect();
    await plane?.close();
  });

  async function connectedVine(c: ProviderCase): Promise<{ id: string }> {
    const vineyard = await client.createVineyard(`${c.provider}-yard`);
    const vine = await client.createConfiguration({
      name: `${c.provider}-infra`,
      vineyard_id: vineyard.id,
      source: { type: 'git', url: `https://example.test/${c.repository}.git`, ref: 'main', path: null },
    });
    const uow = resolve(plane.controlPlane.container, coreServices.unitOfWork);
    const secrets = resolve(plane.controlPlane.container, coreServices.secretBox);
    const sealed = await sealWebhookSecret(secrets, vine.id, SECRET);
    const now = new Date().toISOString();
    await uow.run(systemScope, (stores) =>
      stores.vcs.put({
        vine_id: vine.id,
        owner_id: vine.owner_id,
        provider: c.provider,
        repository: c.repository,
        branch: 'main',
        paths: [],
        auto_deploy: false,
        pull_requests: true,
        fork_pull_requests: 'off',
        webhook_mode: 'manual',
        hook_id: null,
        webhook_secret_sealed: sealed,
        connected_by: vine.owner_id,
        created_at: now,
        updated_at: now,
      }),
    );
    return vine;
  }

  async function deliver(
    c: ProviderCase,
    vineId: string,
    event: string,
    body: Buffer,
    options: { secret?: string | null; id?: string } = {},
  ): Promise<Response> {
    const id = options.id ?? `${c.provider}-delivery-${++deliveries}`;
    return fetch(`${plane.url}/api/webhooks/${c.provider}?vine=${vineId}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...c.headers(event, id, body, options.secret === undefined ? SECRET : options.secret),
      },
      body,
    });
  }

  const jobsOf = async (vineId: string) => client.listJobs({ vine_id: vineId });

  for (const c of CASES) {
    describe(c.provider, () => {
      let vine: { id: string };
      beforeAll(async () => {
        vine = await connectedVine(c);
      });

      it('a wrong or missing signature: 401 problem, nothing created', async () => {
        const body = payload(c.provider, c.push.fixture);
        for (const secret of ['not-the-secret', null]) {
          const answer = await deliver(c, vine.id, c.push.event, body, { secret });
          expect(answer.status).toBe(401);
          expect(answer.headers.get('content-type')).toContain('application/problem+json');
          expect(await answer.json()).toMatchObject({ code: 'webhook_signature_invalid' });
        }
        expect(await jobsOf(vine.id)).toEqual([]);
      });

      it('a ping or an ignored event: 202, nothing created', async () => {
        const answer = await deliver(c, vine.id, c.ping.event, payload(c.provider, c.ping.fixture));
        expect(answer.status).toBe(202);
        expect(await answer.json()).toEqual({ accepted: true, jobs: [] });
        expect(await jobsOf(vine.id)).toEqual([]);
      });

      it('a signed push: 202 and a PLAN of the pushed commit; its redelivery: 202, nothing new', async () => {
        const body = payload(c.provider, c.push.fixture);
        const answer = await deliver(c, vine.id, c.push.event, body, { id: `${c.provider}-push-once` });
        expect(answer.status).toBe(202);
        const { jobs } = (await answer.json()) as { jobs: string[] };
        expect(jobs).toHaveLength(1);
        const job = await client.getJob(jobs[0] as string);
        expect(job).toMatchObject({
          job_type: 'PLAN',
          vine_id: vine.id,
          speculative: false,
          trigger: { type: 'push', provider: c.provider, repository: c.repository, branch: 'main' },
        });
        expect(job.trigger).toMatchObject({ commit_sha: c.push.commit });
        expect(job.config_snapshot.source).toMatchObject({ type: 'git', commit: c.push.commit });

        const again = await deliver(c, vine.id, c.push.event, body, { id: `${c.provider}-push-once` });
        expect(again.status).toBe(202);
        expect(await again.json()).toEqual({ accepted: true, jobs: [] });
        expect(await jobsOf(vine.id)).toHaveLength(1);
      });

      it('a pull request into the branch: a speculative PLAN of its head', async () => {
        // Bitbucket names the head by 12 characters: its commit API gives the full SHA.
        const resolved =
          c.provider === 'bitbucket'
            ? nock('https://api.bitbucket.org', { reqheaders: { authorization: `Bearer ${BITBUCKET_TOKEN}` } })
                .get(`/2.0/repositories/${c.repository}/commit/${BITBUCKET_PR_HEAD.slice(0, 12)}`)
                .reply(200, { type: 'commit', hash: BITBUCKET_PR_HEAD })
            : null;
        const answer = await deliver(c, vine.id, c.pullRequest.event, payload(c.provider, c.pullRequest.fixture));
        expect(answer.status).toBe(202);
        const { jobs } = (await answer.json()) as { jobs: string[] };
        const job = await client.getJob(jobs[0] as string);
        expect(job).toMatchObject({
          speculative: true,
          trigger: { type: 'pull_request', number: c.pullRequest.number, base_branch: 'main' },
        });
        expect(job.trigger).toMatchObject({ head_sha: expect.stringMatching(/^[0-9a-f]{40}$/) });
        if (resolved) {
          expect(resolved.isDone()).toBe(true);
          expect(job.trigger).toMatchObject({ head_sha: BITBUCKET_PR_HEAD });
        }
      });

      it('another repository signed with the secret, or a vine with no connection: 202, nothing', async () => {
        const body = Buffer.from(
          payload(c.provider, c.push.fixture).toString().split(c.repository).join(`${c.repository}-other`),
        );
        const before = (await client.listJobs()).length;
        const answer = await deliver(c, vine.id, c.push.event, body);
        expect(answer.status).toBe(202);
        expect(await answer.json()).toEqual({ accepted: true, jobs: [] });
        // The hook URL of a vine nobody connected: nothing is checked, nothing is done.
        const unknown = await deliver(c, '00000000-0000-4000-8000-000000000000', c.push.event, body, {
          secret: 'guess',
        });
        expect(unknown.status).toBe(202);
        expect(await unknown.json()).toEqual({ accepted: true, jobs: [] });
        expect(await client.listJobs()).toHaveLength(before);
      });
    });
  }
});
