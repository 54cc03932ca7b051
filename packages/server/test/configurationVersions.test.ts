/**
 * Configuration versions (issue 23 item 4) through the real control plane on SQLite and Postgres:
 * two people signed in with GitHub (a stand-in on loopback); bob, an admin of ada's organization,
 * connects a vine. A signed push plans the commit: the control plane fetches its tarball with
 * bob's token (GitHub's 302 to codeload, followed without it) into a configuration version, and
 * the agent's claim names that version (id, sha256, URL) and carries no provider token; the agent
 * downloads exactly those bytes with its own credentials. Once bob is no longer an admin, the
 * connection `needs_reconnect`, the next push's job fails with that reason, and nothing more is
 * fetched or posted with his token.
 */
import { createHash, createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { TrellisClient } from '@trellis/client';
import { joinOrg, tarGz } from '@trellis/testkit';
import { TrellisClient as Client } from '@trellis/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type AgentClient, type RunningControlPlane, startControlPlane } from './support/controlPlane.js';
import { describeEachDialect } from './support/dialects.js';
import {
  type GitHubPerson,
  type GitHubStandIn,
  signInWithGitHub,
  startGitHubStandIn,
} from './support/gitHubStandIn.js';

const FIXTURES = new URL('../../../test-fixtures/vcs/github/', import.meta.url);
const REPOSITORY = 'acme-platform/infra-live';
const FIRST = '8457785ada4ab6182c16fbac60586081edf51999';
const SECOND = '9a1b2c3d4e5f60718293a4b5c6d7e8f901234567';

type Payload = Record<string, unknown>;
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURES), 'utf8')) as Payload;

function push(after: string): Payload {
  const payload = fixture('push');
  payload.after = after;
  payload.head_commit = { ...(payload.head_commit as Payload), id: after };
  // Every file changed: the vine watches the whole repository.
  return payload;
}

describeEachDialect('configuration versions of connected vines', (dialect) => {
  let github: GitHubStandIn;
  let plane: RunningControlPlane;
  let ada: TrellisClient;
  let bob: TrellisClient;
  let bobAtGitHub: GitHubPerson;
  let agent: AgentClient;
  let orgId: string;
  let membership: string;
  let vineId: string;
  let secret: string;
  let webhookUrl: string;
  const archive = tarGz([
    { path: 'acme-platform-infra-live-8457785/', type: 'directory' },
    { path: 'acme-platform-infra-live-8457785/main.tf', content: 'output "commit" { value = "first" }\n' },
  ]);

  async function deliver(payload: unknown) {
    const body = Buffer.from(JSON.stringify(payload));
    const response = await fetch(webhookUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'push',
        'x-github-delivery': randomUUID(),
        'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
      },
      body,
    });
    return { status: response.status, body: (await response.json()) as { jobs?: string[] } };
  }

  beforeAll(async () => {
    github = await startGitHubStandIn();
    const adaAtGitHub = github.addPerson('ada-lovelace', 41001, [REPOSITORY]);
    bobAtGitHub = github.addPerson('bob-babbage', 41002, [REPOSITORY]);
    plane = await startControlPlane(dialect, { env: github.env, register: { vcs: github.vcs } });
    ada = await signInWithGitHub(plane.controlPlane.config.webUrl, adaAtGitHub);
    bob = await signInWithGitHub(plane.controlPlane.config.webUrl, bobAtGitHub);
    const org = await ada.createOrg('acme');
    orgId = org.id;
    membership = await joinOrg(ada, bob, orgId, bobAtGitHub.email, 'admin');
    const registration = await ada.registerWorker({ name: 'org-agent', orgId });
    agent = Object.assign(
      new Client({
        baseUrl: plane.url,
        auth: { kind: 'worker', workerId: registration.worker_id, workerToken: registration.worker_token },
      }),
      { workerId: registration.worker_id, workerToken: registration.worker_token },
    );
    const vineyard = await ada.createVineyard('prod', { orgId });
    const vine = await ada.createConfiguration({
      name: 'network',
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': 'terraform {}\n' } },
    });
    vineId = vine.id;
    const connection = await bob.connectRepository(vineId, {
      provider: 'github',
      repository: REPOSITORY,
      branch: 'main',
    });
    const hook = github.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/hooks')).at(-1);
    const config = hook?.body?.config as { secret: string } | undefined;
    if (!config) throw new Error('the hook was not created at the provider');
    secret = config.secret;
    webhookUrl = connection.webhook_url;
    expect(connection.status).toBe('connected');
    github.archives.set(`${REPOSITORY}@${FIRST}`, archive);
  });
  afterAll(async () => {
    await plane?.close();
    await github?.stop();
  });

  it('a push plans its commit from a configuration version; the claim carries no provider token', async () => {
    const answer = await deliver(push(FIRST));
    expect(answer.status).toBe(202);
    const jobId = answer.body.jobs?.[0] as string;
    const claimed = await agent.claimJob();
    expect(claimed?.job.id).toBe(jobId);
    const sha256 = createHash('sha256').update(archive).digest('hex');
    expect(claimed?.configuration_version).toEqual({
      id: expect.any(String),
      sha256,
      size: archive.length,
      url: `/api/jobs/${jobId}/configuration-versions/${claimed?.configuration_version?.id}`,
      strip_components: 1,
    });
    expect(claimed).not.toHaveProperty('source_credentials');
    expect(JSON.stringify(claimed)).not.toContain(bobAtGitHub.token);
    // The control plane fetched it with bob's token; codeload got no token.
    const fetched = github.requests.filter((r) => r.path.includes('tarball') || r.path.startsWith('/_codeload/'));
    expect(fetched.map((r) => [r.path, r.login])).toEqual([
      [`/repos/${REPOSITORY}/tarball/${FIRST}`, 'bob-babbage'],
      [`/_codeload/${REPOSITORY}/legacy.tar.gz/${FIRST}`, null],
    ]);
    // The agent downloads exactly those bytes with its own credentials.
    const download = await agent.downloadConfigurationVersion(claimed?.configuration_version?.url as string);
    expect(download.sha256).toBe(sha256);
    expect(Buffer.from(await new Response(download.body).arrayBuffer()).equals(archive)).toBe(true);
    // Nobody else's credentials open it: ada's CLI token is no worker's.
    const asPerson = await fetch(`${plane.url}${claimed?.configuration_version?.url}`, {
      headers: { authorization: `Bearer ${await plane.accessToken()}` },
    });
    expect(asPerson.status).toBe(401);
    await agent.reportStatus(jobId, { status: 'SUCCESS' });
  });

  it('once its person is no longer an admin: needs_reconnect, and its jobs fail with that reason', async () => {
    await ada.setMemberRole(orgId, membership, 'operator');
    expect((await ada.getRepositoryConnection(vineId)).status).toBe('needs_reconnect');
    const before = github.requests.length;
    const answer = await deliver(push(SECOND));
    expect(answer.status).toBe(202);
    const jobId = answer.body.jobs?.[0] as string;
    expect(await agent.claimJob()).toBeNull();
    const job = await ada.getJob(jobId);
    expect(job.status).toBe('FAILED');
    expect(job.error_message).toMatch(
      /^needs_reconnect: the person who connected acme-platform\/infra-live is no longer an admin/,
    );
    // Nothing fetched, posted or commented with bob's token since.
    await plane.controlPlane.useCases.vcsFeedback.deliverDue();
    expect(github.requests.slice(before).filter((r) => r.login === 'bob-babbage')).toEqual([]);

    // An admin connecting it again lends their own token.
    await ada.connectRepository(vineId, { provider: 'github', repository: REPOSITORY, branch: 'main' });
    expect((await ada.getRepositoryConnection(vineId)).status).toBe('connected');
  });
});
