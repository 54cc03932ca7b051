/** `trellis jobs list` and `jobs show` of git-driven jobs (issue 13): a signed webhook to a real server. */
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AesGcmSecretBox, webhookSecretContext } from '@trellis/core';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, runTrellis, TempHome, TestServer, userClient } from './harness.js';

const KEY = 'ab'.repeat(32);
const SECRET = 'whsec-cli-test-51d0c7';
const REPO = 'acme-platform/infra-live';
const PUSH_SHA = '8457785ada4ab6182c16fbac60586081edf51999';
const PR_HEAD = '8b0baff713ddef5e79d9db0f3fa713ee8bd94512';
const FIXTURES = new URL('../../../test-fixtures/vcs/github/', import.meta.url);

let server: TestServer;
let home: TempHome;
const dir = mkdtempSync(join(tmpdir(), 'trellis-cli-git-'));
const databasePath = join(dir, 'trellis.db');

beforeAll(async () => {
  server = await new TestServer().start(0, {
    DATABASE_URL: `sqlite://${databasePath}`,
    TRELLIS_ENCRYPTION_KEY: KEY,
    TRELLIS_GITHUB_CLIENT_ID: 'gh-client',
    TRELLIS_GITHUB_CLIENT_SECRET: 'gh-secret',
  });
  home = new TempHome();
  await login(server, home);
});
afterAll(async () => {
  await server?.destroy();
  home?.remove();
  rmSync(dir, { recursive: true, force: true });
});

async function trellis(...args: string[]) {
  const result = await runTrellis(args, { env: home.env() });
  if (result.code !== 0) throw new Error(`trellis ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result;
}

/** Connects the vine to the repository as the connect command stores it (manual webhook). */
async function connect(vine: { id: string; owner_id: string }): Promise<void> {
  const sealed = await new AesGcmSecretBox([Buffer.from(KEY, 'hex')]).seal(SECRET, webhookSecretContext(vine.id));
  const db = new Database(databasePath);
  try {
    const now = new Date().toISOString();
    db.prepare(
      `INSERT INTO vcs_connections (vine_id, owner_id, provider, repository, repository_key, branch, paths,
        auto_deploy, pull_requests, webhook_mode, hook_id, webhook_secret_sealed, connected_by, created_at, updated_at)
       VALUES (?, ?, 'github', ?, ?, 'main', '[]', 0, 1, 'manual', NULL, ?, ?, ?, ?)`,
    ).run(vine.id, vine.owner_id, REPO, REPO.toLowerCase(), sealed, vine.owner_id, now, now);
  } finally {
    db.close();
  }
}

async function deliver(event: string, fixture: string): Promise<string> {
  const body = readFileSync(new URL(`${fixture}.json`, FIXTURES));
  const answer = await fetch(`${server.url}/api/webhooks/github`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-github-event': event,
      'x-github-delivery': `cli-${fixture}`,
      'x-hub-signature-256': `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`,
    },
    body,
  });
  expect(answer.status).toBe(202);
  const { jobs } = (await answer.json()) as { jobs: string[] };
  expect(jobs).toHaveLength(1);
  return jobs[0] as string;
}

describe('git-driven jobs in the CLI', () => {
  it('jobs list shows the trigger and the commit; jobs show the push, its commit and the pull request', async () => {
    const client = userClient(server, home);
    const vineyard = await client.createVineyard('git-cli');
    const vine = await client.createConfiguration({
      name: 'infra-live',
      vineyard_id: vineyard.id,
      source: { type: 'git', url: `https://github.com/${REPO}.git`, ref: 'main', path: null },
    });
    await connect(vine);
    await client.createJob({ job_type: 'PLAN', configuration_id: vine.id });
    const pushJob = await deliver('push', 'push');
    const prJob = await deliver('pull_request', 'pull_request-opened');

    const list = await trellis('jobs', 'list');
    const [header, ...rows] = list.stdout.trim().split('\n');
    expect(header).toMatch(/ID +TYPE +STATUS +CONFIG +TRIGGER +COMMIT +CREATED +DURATION/);
    expect(rows.find((row) => row.startsWith(pushJob))).toMatch(/PLAN +QUEUED +infra-live +push +8457785 /);
    expect(rows.find((row) => row.startsWith(prJob))).toMatch(/PLAN +QUEUED +infra-live +pr #42 +8b0baff /);
    expect(rows.find((row) => !row.startsWith(pushJob) && !row.startsWith(prJob))).toMatch(
      /PLAN +QUEUED +infra-live +manual +- /,
    );

    const push = await trellis('jobs', 'show', pushJob);
    expect(push.stdout).toMatch(/Trigger: +push to main of acme-platform\/infra-live \(github\) by Rosa Moreau\n/);
    expect(push.stdout).toContain(`${PUSH_SHA} dns: add the status page record`);
    expect(push.stdout).toMatch(/Speculative: +no\n/);

    const pr = await trellis('jobs', 'show', prJob);
    expect(pr.stdout).toMatch(/Trigger: +pull request #42 of acme-platform\/infra-live \(github\)/);
    expect(pr.stdout).toMatch(/Speculative: +yes \(never deployed\)\n/);
    expect(pr.stdout).toMatch(new RegExp(`Commit: +${PR_HEAD}\\n`));
    expect(pr.stdout).toMatch(
      /Pull request: +#42 Move the NAT gateways to two zones https:\/\/github\.com\/acme-platform\/infra-live\/pull\/42\n/,
    );

    const json = JSON.parse((await trellis('jobs', 'list', '--json')).stdout) as { id: string }[];
    expect(json.find((job) => job.id === prJob)).toMatchObject({
      speculative: true,
      trigger: { type: 'pull_request', number: 42, head_sha: PR_HEAD },
    });
  });
});
