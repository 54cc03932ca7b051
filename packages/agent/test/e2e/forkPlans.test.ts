import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
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
const STS_ANSWER = readFileSync(
  fileURLToPath(new URL('../../../../test-fixtures/aws/sts-assume-role-response.xml', import.meta.url)),
);
const REPOSITORY = 'acme/public-infra';
const ZERO_SHA = '0'.repeat(40);
const SECRET_VALUE = 'fork-must-never-see-this-42';
const ROLE = 'arn:aws:iam::123456789012:role/trellis-deployer';

type Payload = Record<string, unknown>;
const obj = (value: unknown) => value as Payload;
const fixture = (name: string) => JSON.parse(readFileSync(join(GITHUB_FIXTURES, `${name}.json`), 'utf8')) as Payload;

/** Says how long the sensitive variable it got is, in the plan, without showing it. */
const terraform = (note: string) => `# ${note}
variable "db_password" {
  type      = string
  default   = ""
  sensitive = true
}
resource "terraform_data" "main" {
  input = "password-length-\${nonsensitive(length(var.db_password))}"
}
`;

/**
 * Issue 23 end to end: a pull request from a fork, planned without secrets by the real agent with
 * real OpenTofu. The vine has a sensitive variable and a cloud identity (STS answered on loopback
 * with its recorded shape, every AssumeRole counted); a push is planned and deployed with both (its
 * state in the control plane). The fork's plan runs from the public repository without clone
 * credentials, gets neither the sensitive variable nor the identity, plans read-only
 * (`-lock=false`: the control plane refuses its locks), and leaves the state as it was.
 */
describe.skipIf(TOFU === null)('a fork pull request planned without secrets', { timeout: 600_000 }, () => {
  const TOKEN = `gho_${randomBytes(18).toString('hex')}`;
  const KEY = randomBytes(32);
  let git: GitServer;
  let github: Awaited<ReturnType<typeof startFakeGitHub>>;
  let server: E2eServer;
  let agent: AgentProcess;
  let vineId: string;
  let secret: string;
  let shas: { main: string; fork: string };
  let sts: Server;
  let assumed = 0;

  async function deliver(event: string, payload: unknown) {
    const body = Buffer.from(JSON.stringify(payload));
    const response = await fetch(`${server.url}/api/webhooks/github?vine=${vineId}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': event,
        'x-github-delivery': randomUUID(),
        'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
      },
      body,
    });
    return { status: response.status, body: (await response.json()) as { jobs?: string[] } };
  }

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

  beforeAll(async () => {
    // A public repository: anyone clones it (as the fork plan does, with no credentials).
    git = await startGitServer({ username: 'x-access-token', password: TOKEN, public: true });
    const [main] = git.createRepo(REPOSITORY, [{ 'main.tf': terraform('main') }]);
    const fork = git.commit(REPOSITORY, { 'main.tf': terraform('a change from a fork') }, 'fork-change');
    shas = { main: main as string, fork };
    github = await startFakeGitHub(TOKEN, REPOSITORY, (ref) => git.archive(REPOSITORY, ref));
    sts = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        assumed += 1;
        response.writeHead(200, { 'content-type': 'text/xml' });
        response.end(STS_ANSWER);
      });
    });
    await new Promise<void>((resolve) => sts.listen(0, '127.0.0.1', resolve));
    server = await startServer({
      TRELLIS_ENCRYPTION_KEY: KEY.toString('hex'),
      TRELLIS_GITHUB_CLIENT_ID: 'github-client',
      TRELLIS_GITHUB_CLIENT_SECRET: 'github-secret',
      TRELLIS_GITHUB_BASE_URL: git.origin,
      TRELLIS_GITHUB_API_URL: github.url,
    });
    // The connecting person's GitHub sign-in, with its (sealed) token, as signing in leaves it.
    const box = new AesGcmSecretBox([new Uint8Array(KEY)]);
    const sealed = await box.seal(TOKEN, identityTokenContext('github', '5151'));
    const db = new Database(join(server.dataDir, 'trellis.db'));
    try {
      db.pragma('busy_timeout = 10000');
      const { id: userId } = db.prepare('SELECT id FROM users LIMIT 1').get() as { id: string };
      db.prepare(
        "INSERT INTO identities (user_id, provider, provider_user_id, provider_token, scopes) VALUES (?, 'github', '5151', ?, 'repo')",
      ).run(userId, sealed);
    } finally {
      db.close();
    }
    const vineyard = await server.user.createVineyard('forks');
    const vine = await server.user.createConfiguration({
      name: 'public-infra',
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': terraform('inline') } },
      variables: { db_password: { value: SECRET_VALUE, sensitive: true } },
      cloud_identity: { provider: 'aws', role_arn: ROLE },
      engine: 'tofu',
    });
    vineId = vine.id;
    await server.user.connectRepository(vine.id, {
      provider: 'github',
      repository: REPOSITORY,
      branch: 'main',
      auto_deploy: true,
      fork_pull_requests: 'without_secrets',
      webhook: 'auto',
    });
    const hook = github.requests.find((r) => r.method === 'POST' && r.path === `/repos/${REPOSITORY}/hooks`);
    const config = hook?.body?.config as { secret: string } | undefined;
    if (!config) throw new Error('the hook was not created at the provider');
    secret = config.secret;
    agent = await startAgent(server, {
      name: 'fork-agent',
      env: {
        GIT_SSL_CAINFO: git.caFile,
        AWS_ENDPOINT_URL_STS: `http://127.0.0.1:${(sts.address() as AddressInfo).port}`,
        AWS_REGION: 'eu-west-1',
        AWS_ACCESS_KEY_ID: 'AKIAHOSTCREDENTIALS1',
        AWS_SECRET_ACCESS_KEY: 'host-secret-key-of-the-agent-machine',
      },
    });
  });

  afterAll(async () => {
    await agent?.stop();
    killLeftovers();
    await server?.stop();
    await git?.stop();
    await github?.stop();
    await new Promise<void>((resolve) => (sts ? sts.close(() => resolve()) : resolve()));
  });

  it('a push is planned and deployed with the secret: the state holds it', async () => {
    const payload = fixture('push');
    const head = { ...obj(payload.head_commit), id: shas.main, added: [], removed: [], modified: ['main.tf'] };
    Object.assign(payload, {
      ref: 'refs/heads/main',
      before: ZERO_SHA,
      after: shas.main,
      deleted: false,
      repository: { ...obj(payload.repository), full_name: REPOSITORY, name: 'public-infra' },
      commits: [head],
      head_commit: head,
    });
    const answer = await deliver('push', payload);
    const planId = answer.body.jobs?.[0] as string;
    const plan = await waitForJob(server, planId, undefined, 240_000);
    const planLog = (await jobLog(server, planId)).map((c) => c.log_chunk).join('');
    expect(plan.status, planLog).toBe('SUCCESS');
    expect(planLog).toContain(`password-length-${SECRET_VALUE.length}`);
    const deploy = await eventually(
      'the auto-deploy of the push',
      async () => (await server.user.listJobs({ vine_id: vineId })).find((job) => job.job_type === 'DEPLOY'),
      120_000,
    );
    const deployed = await waitForJob(server, deploy.id, undefined, 240_000);
    expect(deployed.status, (await jobLog(server, deploy.id)).map((c) => c.log_chunk).join('')).toBe('SUCCESS');
    expect(stateRows().versions).toBeGreaterThan(0);
    // Both assumed the vine's role.
    expect(planLog).toContain(`assumed ${ROLE}`);
    expect(assumed).toBeGreaterThanOrEqual(2);
  });

  it("the fork's plan gets no secret, no identity and no clone credentials, and reads the state only", async () => {
    const before = stateRows();
    const assumedBefore = assumed;
    const gitAuthorized = git.stats.authorized;
    const payload = fixture('pull_request-fork');
    const pullRequest = obj(payload.pull_request);
    payload.repository = { ...obj(payload.repository), full_name: REPOSITORY, name: 'public-infra' };
    payload.pull_request = {
      ...pullRequest,
      head: { ...obj(pullRequest.head), sha: shas.fork, ref: 'fork-change' },
      base: {
        ...obj(pullRequest.base),
        ref: 'main',
        repo: { ...obj(obj(pullRequest.base).repo), full_name: REPOSITORY },
      },
    };
    const answer = await deliver('pull_request', payload);
    expect(answer.status).toBe(202);
    const jobId = answer.body.jobs?.[0] as string;
    const job = await waitForJob(server, jobId, undefined, 240_000);
    const log = (await jobLog(server, jobId)).map((c) => c.log_chunk).join('');
    expect(job.status, log).toBe('SUCCESS');
    expect(job.trigger).toMatchObject({ type: 'pull_request', fork: true, secrets_withheld: true });
    expect(log).toContain('gets no sensitive variables (db_password), no cloud identity');
    // The engine never had the sensitive value: the plan saw an empty default.
    expect(log).toContain('password-length-0');
    expect(log).not.toContain(SECRET_VALUE);
    // No AssumeRole was tried (it would have failed the job), no clone credentials were used.
    expect(log).not.toContain('assum');
    expect(assumed).toBe(assumedBefore);
    // Nothing fetched with anyone's token for a fork's plan without secrets: it clones the public fork.
    expect(log).not.toContain('configuration version');
    expect(log).toContain(`commit ${shas.fork}`);
    expect(git.stats.authorized).toBe(gitAuthorized);
    // Real OpenTofu planned without the lock the control plane refuses it; the state is unchanged.
    expect(log).toContain('read only: a speculative plan, not locked');
    expect(log).toMatch(/\$ tofu plan .*-lock=false/);
    expect(stateRows()).toEqual({ versions: before.versions, locks: 0 });
    expect(agent.output()).not.toContain(SECRET_VALUE);
  });
});
