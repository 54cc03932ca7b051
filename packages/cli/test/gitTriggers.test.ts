/** `trellis jobs list` and `jobs show` of git-driven jobs (issue 13): a signed webhook to a real server. */
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, runTrellis, TempHome, TestServer, userClient } from './harness.js';

const REPO = 'acme-platform/infra-live';
const PUSH_SHA = '8457785ada4ab6182c16fbac60586081edf51999';
const PR_HEAD = '8b0baff713ddef5e79d9db0f3fa713ee8bd94512';
const FIXTURES = new URL('../../../test-fixtures/vcs/github/', import.meta.url);

let server: TestServer;
let home: TempHome;
/** The webhook secret of the connection, shown once by the manual connect. */
let secret = '';
let webhookUrl = '';

beforeAll(async () => {
  server = await new TestServer().start(0, {
    TRELLIS_GITHUB_CLIENT_ID: 'gh-client',
    TRELLIS_GITHUB_CLIENT_SECRET: 'gh-secret',
  });
  home = new TempHome();
  await login(server, home);
});
afterAll(async () => {
  await server?.destroy();
  home?.remove();
});

async function trellis(...args: string[]) {
  const result = await runTrellis(args, { env: home.env() });
  if (result.code !== 0) throw new Error(`trellis ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result;
}

async function deliver(event: string, fixture: string): Promise<string> {
  const body = readFileSync(new URL(`${fixture}.json`, FIXTURES));
  const answer = await fetch(`${server.url}${new URL(webhookUrl).pathname}${new URL(webhookUrl).search}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-github-event': event,
      'x-github-delivery': `cli-${fixture}`,
      'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
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
      source: { type: 'inline', files: { 'main.tf': 'output "x" { value = 1 }\n' } },
    });
    const connection = await client.connectRepository(vine.id, {
      provider: 'github',
      repository: REPO,
      branch: 'main',
      webhook: 'manual',
    });
    secret = connection.webhook_secret as string;
    webhookUrl = connection.webhook_url;
    expect(new URL(webhookUrl).pathname).toBe('/api/webhooks/github');
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
