import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AesGcmSecretBox, identityTokenContext } from '@trellis/core';
import { type GitServer, startGitServer } from '@trellis/testkit';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AgentProcess,
  type E2eServer,
  eventually,
  jobLog,
  killLeftovers,
  startAgent,
  startServer,
  TOFU,
  waitForJob,
} from '../support/e2e.js';
import { startFakeGitHub } from '../support/fakeGitHub.js';

const GITHUB_FIXTURES = fileURLToPath(new URL('../../../../test-fixtures/vcs/github/', import.meta.url));
const REPOSITORY = 'acme/infra';
const ZERO_SHA = '0'.repeat(40);

/** A delivery's JSON, loosely: the tests overwrite the fields that matter. */
type Payload = Record<string, unknown>;
const obj = (value: unknown) => value as Record<string, unknown>;

const fixture = (name: string) => JSON.parse(readFileSync(join(GITHUB_FIXTURES, `${name}.json`), 'utf8')) as Payload;

const terraform = (input: string) => `resource "terraform_data" "main" {\n  input = "${input}"\n}\n`;

/**
 * Issue 13 end to end: the real server and agent binaries, real OpenTofu, a real git server on
 * loopback (the private repository) and a fake GitHub API on loopback (hooks, statuses, comments).
 * A vine connected to `acme/infra` with auto-deploy: signed pushes plan and deploy it, a pull
 * request plans it speculatively with one comment edited in place, and the clone token is in no log.
 */
describe.skipIf(TOFU === null)('git-driven runs end to end', { timeout: 600_000 }, () => {
  const TOKEN = `gho_${randomBytes(18).toString('hex')}`;
  const KEY = randomBytes(32);
  let git: GitServer;
  let github: Awaited<ReturnType<typeof startFakeGitHub>>;
  let server: E2eServer;
  let agent: AgentProcess;
  let shas: { first: string; docs: string; pr1: string; pr2: string };
  let vineId: string;
  let secret: string;
  const jobIds = new Set<string>();

  /** Posts a delivery to the server, signed with `key` (null: unsigned). */
  async function deliver(event: string, payload: unknown, options: { id?: string; key?: string | null } = {}) {
    const body = Buffer.from(JSON.stringify(payload));
    const key = options.key === undefined ? secret : options.key;
    // The hook URL Trellis gave names the connection: the delivery is checked against its secret only.
    const response = await fetch(`${server.url}/api/webhooks/github?vine=${vineId}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': event,
        'x-github-delivery': options.id ?? randomUUID(),
        ...(key === null
          ? {}
          : { 'x-hub-signature-256': `sha256=${createHmac('sha256', key).update(body).digest('hex')}` }),
      },
      body,
    });
    const text = await response.text();
    return {
      status: response.status,
      body: text === '' ? null : (JSON.parse(text) as { jobs?: string[]; code?: string }),
    };
  }

  function pushPayload(before: string, after: string, files: string[]) {
    const payload = fixture('push');
    payload.ref = 'refs/heads/main';
    payload.before = before;
    payload.after = after;
    payload.deleted = false;
    payload.repository = { ...obj(payload.repository), full_name: REPOSITORY, name: 'infra' };
    const commit = { ...obj(payload.head_commit), id: after, added: [], removed: [], modified: files };
    payload.commits = [commit];
    payload.head_commit = commit;
    return payload;
  }

  function pullRequestPayload(action: 'opened' | 'synchronize', head: string) {
    const payload = fixture(`pull_request-${action}`);
    payload.action = action;
    payload.number = 7;
    payload.repository = { ...obj(payload.repository), full_name: REPOSITORY, name: 'infra' };
    const pullRequest = obj(payload.pull_request);
    payload.pull_request = {
      ...pullRequest,
      number: 7,
      html_url: 'https://github.example/acme/infra/pull/7',
      head: { ...obj(pullRequest.head), sha: head, ref: 'feature' },
      base: { ...obj(pullRequest.base), ref: 'main' },
    };
    return payload;
  }

  const jobsOfVine = () => server.user.listJobs({ vine_id: vineId });

  const statusesOf = (sha: string) =>
    github.requests
      .filter((r) => r.method === 'POST' && r.path === `/repos/${REPOSITORY}/statuses/${sha}`)
      .map((r) => r.body as { state: string; context: string; target_url: string; description: string });

  beforeAll(async () => {
    git = await startGitServer({ username: 'x-access-token', password: TOKEN });
    const [first] = git.createRepo(REPOSITORY, [{ 'infra/main.tf': terraform('v1'), 'docs/README.md': 'one\n' }]);
    const docs = git.commit(REPOSITORY, { 'docs/README.md': 'two\n' }, 'main');
    // The pull request's branch, from main's head (the testkit's commit() branches from the last commit).
    const pr1 = git.commit(REPOSITORY, { 'infra/main.tf': terraform('v2') }, 'feature');
    const pr2 = git.commit(REPOSITORY, { 'infra/main.tf': terraform('v3') }, 'feature');
    shas = { first: first as string, docs, pr1, pr2 };
    github = await startFakeGitHub(TOKEN, REPOSITORY, (ref) => git.archive(REPOSITORY, ref));
    server = await startServer({
      TRELLIS_ENCRYPTION_KEY: KEY.toString('hex'),
      TRELLIS_GITHUB_CLIENT_ID: 'github-client',
      TRELLIS_GITHUB_CLIENT_SECRET: 'github-secret',
      // Clones from the loopback git server, the API at the fake.
      TRELLIS_GITHUB_BASE_URL: git.origin,
      TRELLIS_GITHUB_API_URL: github.url,
      TRELLIS_OUTBOX_INTERVAL_S: '1',
    });

    // The connecting user's GitHub sign-in, with its (sealed) token, as signing in would leave it.
    const box = new AesGcmSecretBox([new Uint8Array(KEY)]);
    const sealed = await box.seal(TOKEN, identityTokenContext('github', '4242'));
    const db = new Database(join(server.dataDir, 'trellis.db'));
    try {
      db.pragma('busy_timeout = 10000');
      const { id: userId } = db.prepare('SELECT id FROM users LIMIT 1').get() as { id: string };
      db.prepare(
        "INSERT INTO identities (user_id, provider, provider_user_id, provider_token, scopes) VALUES (?, 'github', '4242', ?, 'repo')",
      ).run(userId, sealed);
    } finally {
      db.close();
    }
  });

  afterAll(async () => {
    await agent?.stop();
    killLeftovers();
    await server?.stop();
    await git?.stop();
    await github?.stop();
  });

  it('connects the vine: the hook is created at the provider with the webhook URL and a secret', async () => {
    const vineyard = await server.user.createVineyard('git-yard');
    const vine = await server.user.createConfiguration({
      name: 'git-infra',
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': terraform('inline') } },
      engine: 'tofu',
    });
    vineId = vine.id;
    const connected = await server.user.connectRepository(vine.id, {
      provider: 'github',
      repository: REPOSITORY,
      branch: 'main',
      paths: ['infra/**'],
      path: 'infra',
      auto_deploy: true,
      webhook: 'auto',
    });
    const hooks = github.requests.filter((r) => r.method === 'POST' && r.path === `/repos/${REPOSITORY}/hooks`);
    expect(hooks).toHaveLength(1);
    expect(hooks[0]?.authorized).toBe(true);
    const config = hooks[0]?.body?.config as { url: string; secret: string; content_type: string };
    expect(config.url).toBe(connected.webhook_url);
    expect(config.url).toMatch(new RegExp(`/api/webhooks/github\\?vine=${vine.id}$`));
    expect(config.secret).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(connected)).not.toContain(config.secret);
    secret = config.secret;
    expect(connected).toMatchObject({ repository: REPOSITORY, branch: 'main', auto_deploy: true, hook_id: '9000' });
    const source = (await server.user.getConfiguration(vine.id)).source;
    expect(source).toMatchObject({ type: 'git', url: git.url(REPOSITORY), ref: 'main', path: 'infra' });
  });

  it('a signed push plans that commit on the agent, auto-deploys it, and reports pending then success', async () => {
    const before = git.stats.requests;
    const answer = await deliver('push', pushPayload(ZERO_SHA, shas.first, ['infra/main.tf']));
    expect(answer.status).toBe(202);
    expect(answer.body?.jobs).toHaveLength(1);
    const planId = answer.body?.jobs?.[0] as string;
    jobIds.add(planId);
    // No agent yet: the plan waits in the queue until the feedback worker has said so at the
    // provider (a newer status replaces one not yet sent, so a plan done first would skip it).
    const queuedStatus = await eventually(
      'the pending status of the queued plan',
      () => statusesOf(shas.first)[0],
      120_000,
    );
    expect(queuedStatus).toMatchObject({ state: 'pending', description: 'Plan queued' });
    expect((await server.user.getJob(planId)).status).toBe('QUEUED');
    // The agent could not even reach the git server (it does not trust its certificate): it runs
    // the configuration version the control plane made of the commit (issue 23).
    agent = await startAgent(server, { name: 'git-driven' });
    const plan = await waitForJob(server, planId, undefined, 240_000);
    const planLog = (await jobLog(server, planId)).map((chunk) => chunk.log_chunk).join('');
    expect(plan.status, planLog).toBe('SUCCESS');
    expect(plan.job_type).toBe('PLAN');
    expect(plan.trigger).toMatchObject({ type: 'push', commit_sha: shas.first });
    expect(plan.config_snapshot.source).toMatchObject({ commit: shas.first });
    expect(planLog).toMatch(new RegExp(`source: configuration version [0-9a-f-]{36}, commit ${shas.first}`));
    expect(planLog).toContain('"v1"');
    expect(git.stats.requests).toBe(before);
    // The control plane fetched the tarball with the token; codeload got none, the agent nothing.
    const tarballs = github.requests.filter((r) => r.path === `/repos/${REPOSITORY}/tarball/${shas.first}`);
    expect(tarballs.length).toBeGreaterThan(0);
    expect(tarballs.every((r) => r.authorized)).toBe(true);
    expect(github.requests.filter((r) => r.path.startsWith('/_codeload/')).every((r) => !r.authorized)).toBe(true);
    expect(agent.output()).not.toContain(TOKEN);

    // auto_deploy: the plan had changes, so a DEPLOY of it follows and the vine is deployed.
    const deploy = await eventually(
      'the auto-deploy of the push plan',
      async () => (await jobsOfVine()).find((job) => job.job_type === 'DEPLOY'),
      120_000,
    );
    jobIds.add(deploy.id);
    const deployed = await waitForJob(server, deploy.id, undefined, 240_000);
    expect(deployed.status, (await jobLog(server, deploy.id)).map((c) => c.log_chunk).join('')).toBe('SUCCESS');
    expect(deployed.config_snapshot.source).toMatchObject({ commit: shas.first });
    await eventually(
      'the vine to be DEPLOYED',
      async () => {
        const vine = await server.user.getConfiguration(vineId);
        return vine.status === 'DEPLOYED' ? vine : undefined;
      },
      120_000,
    );

    // The commit's status at the provider: pending from the plan's queueing, success at the end.
    // One status per vine and commit: the deploy's statuses follow the plan's, and a newer status
    // replaces one not yet sent (docs/git.md), so the plan's own success may give way to the
    // deploy's pending; the last one is the deploy's success, linking its page.
    const statuses = await eventually(
      'the success status of the deploy of the push commit',
      () => {
        const all = statusesOf(shas.first);
        const last = all.at(-1);
        return last?.state === 'success' && last.target_url.endsWith(`/jobs/${deploy.id}`) ? all : undefined;
      },
      120_000,
    );
    expect(statuses[0]).toMatchObject({ state: 'pending', description: 'Plan queued' });
    expect(statuses[0]?.target_url).toMatch(new RegExp(`^https?://[^/]+/jobs/${planId}$`));
    expect(statuses.at(-1)).toMatchObject({ state: 'success', description: 'Deploy succeeded' });
    expect(statuses.at(-1)?.target_url).toMatch(new RegExp(`^https?://[^/]+/jobs/${deploy.id}$`));
    for (const status of statuses) {
      expect(status.context).toBe('trellis/git-yard/git-infra');
      expect(status.target_url).toMatch(new RegExp(`/jobs/(${planId}|${deploy.id})$`));
      expect(['pending', 'success']).toContain(status.state);
    }
    expect(github.requests.filter((r) => !r.path.startsWith('/_codeload/')).every((r) => r.authorized)).toBe(true);
  });

  it('a push touching only other paths queues nothing', async () => {
    const before = (await jobsOfVine()).length;
    const answer = await deliver('push', pushPayload(shas.first, shas.docs, ['docs/README.md']));
    expect(answer.status).toBe(202);
    expect(answer.body?.jobs).toEqual([]);
    expect((await jobsOfVine()).length).toBe(before);
  });

  /** The vine's state in the server's database: its versions and whether a lock is held. */
  function stateRows(): { versions: number; locks: number } {
    const db = new Database(join(server.dataDir, 'trellis.db'), { readonly: true });
    try {
      db.pragma('busy_timeout = 10000');
      const count = (table: string) =>
        (db.prepare(`SELECT count(*) AS n FROM ${table} WHERE vine_id = ?`).get(vineId) as { n: number }).n;
      return { versions: count('state_versions'), locks: count('state_locks') };
    } finally {
      db.close();
    }
  }

  it('a pull request plans speculatively with one comment, edited in place by the next push to it', async () => {
    const stateBefore = stateRows();
    expect(stateBefore.versions).toBeGreaterThan(0);
    const opened = await deliver('pull_request', pullRequestPayload('opened', shas.pr1));
    expect(opened.status).toBe(202);
    expect(opened.body?.jobs).toHaveLength(1);
    const firstId = opened.body?.jobs?.[0] as string;
    jobIds.add(firstId);
    const first = await waitForJob(server, firstId, undefined, 240_000);
    const firstLog = (await jobLog(server, firstId)).map((c) => c.log_chunk).join('');
    expect(first.status, firstLog).toBe('SUCCESS');
    // Real OpenTofu planned read-only: no lock taken (the server refuses one), the state unchanged.
    expect(firstLog).toContain('read only: a speculative plan, not locked');
    expect(firstLog).toMatch(/\$ tofu plan .*-lock=false/);
    expect(stateRows()).toEqual({ versions: stateBefore.versions, locks: 0 });
    expect(first.trigger).toMatchObject({ type: 'pull_request', number: 7, head_sha: shas.pr1 });
    expect(first.config_snapshot.source).toMatchObject({ commit: shas.pr1 });

    const commentPosts = () =>
      github.requests.filter((r) => r.method === 'POST' && r.path === `/repos/${REPOSITORY}/issues/7/comments`);
    const commentEdits = () =>
      github.requests.filter((r) => r.method === 'PATCH' && r.path.includes('/issues/comments/'));
    const post = await eventually('the pull request comment', () => commentPosts()[0], 120_000);
    const body = String(post.body?.body);
    expect(body).toContain('Trellis plan');
    expect(body).toContain('git-infra');
    expect(body).toContain('Plan succeeded');
    expect(body).toContain(shas.pr1.slice(0, 12));
    expect(body).toContain('terraform_data.main');
    expect(body).toContain(`/jobs/${firstId}`);
    await eventually(
      'a success status of the pull request head',
      () => (statusesOf(shas.pr1).some((s) => s.state === 'success') ? true : undefined),
      120_000,
    );
    // The fake answered the POST with the comment's id: that comment is edited next.
    const commentId = String((post.answer as { id: number }).id);

    // The pull request's plan is never deployed.
    await expect(
      server.user.createJob({ job_type: 'DEPLOY', configuration_id: vineId, plan_job_id: firstId }),
    ).rejects.toMatchObject({ status: 409, code: 'plan_speculative' });

    const sync = await deliver('pull_request', pullRequestPayload('synchronize', shas.pr2));
    expect(sync.status).toBe(202);
    expect(sync.body?.jobs).toHaveLength(1);
    const secondId = sync.body?.jobs?.[0] as string;
    jobIds.add(secondId);
    const second = await waitForJob(server, secondId, undefined, 240_000);
    expect(second.status, (await jobLog(server, secondId)).map((c) => c.log_chunk).join('')).toBe('SUCCESS');
    expect(second.config_snapshot.source).toMatchObject({ commit: shas.pr2 });
    const edit = await eventually(
      'the edit of the comment for the second plan',
      () => commentEdits().find((r) => String(r.body?.body).includes(shas.pr2.slice(0, 12))),
      120_000,
    );
    expect(edit.path).toBe(`/repos/${REPOSITORY}/issues/comments/${commentId}`);
    expect(String(edit.body?.body)).toContain(`/jobs/${secondId}`);
    await eventually(
      'a success status of the second head',
      () => (statusesOf(shas.pr2).some((s) => s.state === 'success') ? true : undefined),
      120_000,
    );
    // One comment per vine and pull request: never a second one.
    expect(commentPosts()).toHaveLength(1);
    expect(commentEdits().every((r) => r.path === `/repos/${REPOSITORY}/issues/comments/${commentId}`)).toBe(true);
  });

  it('bad signatures, an unknown repository and a redelivery create nothing', async () => {
    const id = randomUUID();
    const payload = pushPayload(shas.docs, shas.first, ['infra/main.tf']);
    const before = (await jobsOfVine()).map((job) => job.id);
    const bad = await deliver('push', payload, { id: randomUUID(), key: 'not-the-secret' });
    expect(bad.status).toBe(401);
    expect(bad.body?.code).toBe('webhook_signature_invalid');
    const unsigned = await deliver('push', payload, { id: randomUUID(), key: null });
    expect(unsigned.status).toBe(401);
    const elsewhere = pushPayload(shas.docs, shas.first, ['infra/main.tf']);
    elsewhere.repository = { ...obj(elsewhere.repository), full_name: 'acme/other', name: 'other' };
    const unknown = await deliver('push', elsewhere);
    expect(unknown.status).toBe(202);
    expect(unknown.body?.jobs).toEqual([]);
    expect((await jobsOfVine()).map((job) => job.id)).toEqual(before);

    // The first delivery of this id queues a plan; the same delivery again queues nothing. Its
    // commit list is empty (as for a force push), so the changed files come from the compare API.
    payload.commits = [];
    const once = await deliver('push', payload, { id });
    expect(
      github.requests.filter(
        (r) => r.method === 'GET' && r.path === `/repos/${REPOSITORY}/compare/${shas.docs}...${shas.first}`,
      ),
    ).toHaveLength(1);
    expect(once.status).toBe(202);
    expect(once.body?.jobs).toHaveLength(1);
    jobIds.add(once.body?.jobs?.[0] as string);
    const again = await deliver('push', payload, { id });
    expect(again.status).toBe(202);
    expect(again.body?.jobs).toEqual([]);
    const after = (await jobsOfVine()).map((job) => job.id);
    expect(after.filter((job) => !before.includes(job))).toEqual(once.body?.jobs);
    const last = await waitForJob(server, once.body?.jobs?.[0] as string, undefined, 240_000);
    expect(last.status).toBe('SUCCESS');
  });

  it('the token appears in no job log, job record, nor the agent’s or the server’s output', async () => {
    const all = await jobsOfVine();
    for (const job of all) jobIds.add(job.id);
    expect(jobIds.size).toBeGreaterThanOrEqual(5);
    for (const id of jobIds) {
      for (const chunk of await jobLog(server, id)) expect(chunk.log_chunk).not.toContain(TOKEN);
      expect(JSON.stringify(await server.user.getJob(id))).not.toContain(TOKEN);
    }
    expect(agent.output()).not.toContain(TOKEN);
    expect(server.output()).not.toContain(TOKEN);
    expect(server.output()).not.toContain(secret);
  });
});
