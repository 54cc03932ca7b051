/**
 * Pull requests from forks (issue 23) through the real control plane on SQLite and Postgres: a
 * person signed in with GitHub (a stand-in on loopback) connects a vine; a signed delivery of a
 * fork's pull request plans nothing by default and leaves a neutral status; `without_secrets`
 * plans it with a claim that carries no sensitive variable, cloud identity or clone credential;
 * and no pull request's plan can write or lock the vine's state with its state token.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { TrellisClient } from '@trellis/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type AgentClient, type RunningControlPlane, startControlPlane } from './support/controlPlane.js';
import { describeEachDialect } from './support/dialects.js';
import { type GitHubStandIn, signInWithGitHub, startGitHubStandIn } from './support/gitHubStandIn.js';

const FIXTURES = new URL('../../../test-fixtures/vcs/github/', import.meta.url);
const REPOSITORY = 'acme-platform/infra-live';
const FORK_HEAD = 'c3d1f0e4b2a59876fedcba0123456789abcdef01';
const ROLE = 'arn:aws:iam::123456789012:role/deployer';
const DB_PASSWORD = 'hunter2-db-password-of-the-vine';

type Payload = Record<string, unknown>;
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURES), 'utf8')) as Payload;

/** The fork's pull request fixture at another head (each delivery's body differs, as GitHub's do). */
function forkPullRequest(head: string, number = 43): Payload {
  const payload = fixture('pull_request-fork');
  const pullRequest = payload.pull_request as Payload;
  payload.number = number;
  payload.pull_request = { ...pullRequest, number, head: { ...(pullRequest.head as Payload), sha: head } };
  return payload;
}

describeEachDialect('pull requests from forks', (dialect) => {
  let github: GitHubStandIn;
  let plane: RunningControlPlane;
  let ada: TrellisClient;
  let agent: AgentClient;
  let vineId: string;
  let webhookUrl: string;
  let secret: string;

  async function deliver(event: string, payload: unknown, key = secret) {
    const body = Buffer.from(JSON.stringify(payload));
    const response = await fetch(webhookUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': event,
        'x-github-delivery': randomUUID(),
        'x-hub-signature-256': `sha256=${createHmac('sha256', key).update(body).digest('hex')}`,
      },
      body,
    });
    return { status: response.status, body: (await response.json()) as { jobs?: string[]; code?: string } };
  }

  async function connect(forks?: 'off' | 'without_secrets' | 'with_secrets') {
    const connection = await ada.connectRepository(vineId, {
      provider: 'github',
      repository: REPOSITORY,
      branch: 'main',
      ...(forks ? { fork_pull_requests: forks } : {}),
    });
    const hook = github.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/hooks')).at(-1);
    const config = hook?.body?.config as { secret: string } | undefined;
    if (!config) throw new Error('the hook was not created at the provider');
    secret = config.secret;
    webhookUrl = connection.webhook_url;
    return connection;
  }

  /** State requests as the engine makes them: Basic auth with the worker id and the job's state token. */
  const state = (method: string, token: string, body?: string) =>
    fetch(`${plane.url}/api/state/${vineId}${method === 'POST' ? '?ID=lock-1' : ''}`, {
      method,
      headers: {
        authorization: `Basic ${Buffer.from(`${agent.workerId}:${token}`).toString('base64')}`,
        'content-type': 'application/json',
      },
      ...(body === undefined ? {} : { body }),
    });

  beforeAll(async () => {
    github = await startGitHubStandIn();
    const person = github.addPerson('ada-lovelace', 41001);
    plane = await startControlPlane(dialect, { env: github.env, register: { vcs: github.vcs } });
    ada = await signInWithGitHub(plane.controlPlane.config.webUrl, person);
    agent = await plane.agentClient(ada, 'fork-agent');
    const vineyard = await ada.createVineyard('forks');
    const vine = await ada.createConfiguration({
      name: 'network',
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': 'terraform {}\n' } },
      variables: { region: 'eu-west-1', db_password: { value: DB_PASSWORD, sensitive: true } },
      cloud_identity: { provider: 'aws', role_arn: ROLE },
    });
    vineId = vine.id;
  });
  afterAll(async () => {
    await plane?.close();
    await github?.stop();
  });

  it("off by default: a fork's pull request is answered 202, plans nothing, and gets a neutral status saying why", async () => {
    const connection = await connect();
    expect(connection.fork_pull_requests).toBe('off');
    expect((await ada.getRepositoryConnection(vineId)).fork_pull_requests).toBe('off');
    const answer = await deliver('pull_request', forkPullRequest(FORK_HEAD));
    expect(answer).toEqual({ status: 202, body: { accepted: true, jobs: [] } });
    expect(await ada.listJobs({ vine_id: vineId })).toEqual([]);
    // GitHub's statuses have no neutral state: `error`, nothing was checked, and why.
    expect(github.statusesOf(FORK_HEAD)).toEqual([
      expect.objectContaining({
        state: 'error',
        context: 'trellis/forks/network',
        description: 'Not planned: pull requests from forks are off for this vine',
      }),
    ]);
    // The repository's own pull requests still plan, with the vine's secrets.
    const own = await deliver('pull_request', fixture('pull_request-opened'));
    expect(own.body.jobs).toHaveLength(1);
    const claimed = await agent.claimJob();
    expect(claimed?.job.id).toBe(own.body.jobs?.[0]);
    expect(claimed?.job.config_snapshot.variables.db_password).toEqual({ value: DB_PASSWORD, sensitive: true });
    expect(claimed?.cloud_identity).toMatchObject({ role_arn: ROLE });
    await agent.reportStatus(claimed?.job.id as string, { status: 'CANCELLED' });
  });

  it('an unknown mode is refused (400) and changes nothing', async () => {
    await expect(
      ada.connectRepository(vineId, {
        provider: 'github',
        repository: REPOSITORY,
        branch: 'main',
        fork_pull_requests: 'always' as never,
      }),
    ).rejects.toMatchObject({ status: 400, code: 'validation_failed' });
    expect((await ada.getRepositoryConnection(vineId)).fork_pull_requests).toBe('off');
  });

  it('without_secrets: planned, and the claim carries no sensitive variable, no cloud identity, no clone credentials', async () => {
    expect((await connect('without_secrets')).fork_pull_requests).toBe('without_secrets');
    const answer = await deliver('pull_request', forkPullRequest('d'.repeat(40)));
    expect(answer.status).toBe(202);
    const jobId = answer.body.jobs?.[0] as string;
    const job = await ada.getJob(jobId);
    expect(job).toMatchObject({ speculative: true, trigger: { fork: true, secrets_withheld: true } });

    const claimed = await agent.claimJob();
    expect(claimed?.job.id).toBe(jobId);
    expect(JSON.stringify(claimed)).not.toContain(DB_PASSWORD);
    expect(JSON.stringify(claimed)).not.toContain(ROLE);
    expect(claimed?.job.config_snapshot.variables).toEqual({ region: { value: 'eu-west-1', sensitive: false } });
    expect(claimed?.cloud_identity).toBeNull();
    expect(claimed?.identity_token ?? null).toBeNull();
    expect(claimed?.configuration_version ?? null).toBeNull();
    expect(claimed).not.toHaveProperty('source_credentials');
    expect(claimed?.state_access).toBe('read');
    expect(JSON.stringify(await agent.getJobForAgent(jobId))).not.toContain(DB_PASSWORD);
    const log = (await ada.getJobLogs(jobId)).logs.map((chunk) => chunk.log_chunk).join('');
    expect(log).toContain('gets no sensitive variables (db_password), no cloud identity, no identity token');

    // Its state token reads the state, and is refused for a lock or a write.
    const token = claimed?.state_token as string;
    expect((await state('GET', token)).status).toBeLessThan(300);
    const lock = await state('LOCK', token, JSON.stringify({ ID: 'lock-1', Operation: 'OperationTypePlan' }));
    expect(lock.status).toBe(403);
    expect(await lock.json()).toMatchObject({ code: 'state_read_only' });
    const write = await state('POST', token, JSON.stringify({ version: 4, serial: 9, lineage: 'forked' }));
    expect(write.status).toBe(403);
    expect(await write.json()).toMatchObject({ code: 'state_read_only' });
    // The worker's own token is no way around it.
    const own = await state('LOCK', agent.workerToken, JSON.stringify({ ID: 'lock-2' }));
    expect(own.status).toBe(403);
    await agent.reportStatus(jobId, { status: 'CANCELLED' });
  });

  it('with_secrets: planned like the repository’s own, its state still read only', async () => {
    await connect('with_secrets');
    const answer = await deliver('pull_request', forkPullRequest('e'.repeat(40)));
    const jobId = answer.body.jobs?.[0] as string;
    const claimed = await agent.claimJob();
    expect(claimed?.job.id).toBe(jobId);
    expect(claimed?.job.config_snapshot.variables.db_password).toEqual({ value: DB_PASSWORD, sensitive: true });
    expect(claimed?.cloud_identity).toMatchObject({ role_arn: ROLE });
    expect(claimed?.state_access).toBe('read');
    const lock = await state('LOCK', claimed?.state_token as string, JSON.stringify({ ID: 'lock-3' }));
    expect(lock.status).toBe(403);
    await agent.reportStatus(jobId, { status: 'CANCELLED' });
  });

  it("a push's plan keeps its write access: it locks and writes the state", async () => {
    await connect('off');
    const push = fixture('push');
    const answer = await deliver('push', push);
    const jobId = answer.body.jobs?.[0] as string;
    const claimed = await agent.claimJob();
    expect(claimed?.job.id).toBe(jobId);
    expect(claimed?.state_access).toBe('write');
    const token = claimed?.state_token as string;
    expect((await state('LOCK', token, JSON.stringify({ ID: 'lock-1' }))).status).toBe(200);
    expect((await state('POST', token, JSON.stringify({ version: 4, serial: 1, lineage: 'main' }))).status).toBe(200);
    await agent.reportStatus(jobId, { status: 'CANCELLED' });
  });
});
