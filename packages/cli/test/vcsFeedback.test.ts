/**
 * `trellis jobs show` of a git-driven job says whether its commit status and pull request comment
 * reached the provider: the real binary against a control plane in this process (so nock answers
 * for GitHub and the test queues the pull request's plan through the stores, as the webhook does).
 */
import { TrellisClient } from '@trellis/client';
import {
  type Clock,
  type CoreSettings,
  coreServices,
  type Random,
  type SecretBox,
  sealProviderTokens,
  systemScope,
  type UnitOfWork,
} from '@trellis/core';
import { pullRequestTrigger, queueGitJob } from '@trellis/testkit';
import { type RunningControlPlane, startControlPlane } from '@trellis/testkit/controlPlane';
import nock from 'nock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, runTrellis, TempHome, type TestServer, userClient, WEB_URL } from './harness.js';

const TOKEN = 'gho_cli_feedback_token';

let running: RunningControlPlane;
let home: TempHome;
let server: TestServer;

beforeAll(async () => {
  nock.disableNetConnect();
  nock.enableNetConnect(/^(127\.0\.0\.1|localhost)(:\d+)?$/);
  running = await startControlPlane('sqlite', {
    env: {
      TRELLIS_WEB_URL: WEB_URL,
      TRELLIS_GITHUB_CLIENT_ID: 'github-client',
      TRELLIS_GITHUB_CLIENT_SECRET: 'github-secret',
      TRELLIS_OUTBOX_INTERVAL_S: '3600',
    },
  });
  // What `login` needs of a server: its URL and the browser's approval of a device code.
  server = {
    url: running.url.replace(/\/+$/, ''),
    async approve(deviceCode: string) {
      const client = new TrellisClient({
        baseUrl: running.url,
        auth: { kind: 'cookie', cookie: await running.sessionCookie(), origin: WEB_URL },
      });
      return (await client.generateCliLogin(deviceCode)).verification_code;
    },
  } as unknown as TestServer;
  home = new TempHome();
  await login(server, home);
});
afterAll(async () => {
  await running?.close();
  home?.remove();
  nock.cleanAll();
  nock.enableNetConnect();
});

async function trellis(...args: string[]) {
  const result = await runTrellis(args, { env: home.env() });
  if (result.code !== 0) throw new Error(`trellis ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result;
}

describe('trellis jobs show of a git-driven job', () => {
  it('says whether the status and the comment reached GitHub, and why not', async () => {
    const client = userClient(server, home);
    const userId = (await client.whoami()).id;
    const c = running.controlPlane.container;
    const uow = c.resolve<UnitOfWork>(coreServices.unitOfWork.id);
    const sealed = await sealProviderTokens(
      c.resolve<SecretBox>(coreServices.secretBox.id),
      { provider: 'github', provider_user_id: '77' },
      { accessToken: TOKEN, refreshToken: null, expiresAt: null },
    );
    await uow.run(systemScope, (stores) =>
      stores.identities.upsert({
        user_id: userId,
        provider: 'github',
        provider_user_id: '77',
        provider_token: sealed,
        scopes: 'repo',
      }),
    );
    const vineyard = await client.createVineyard('feedback-cli');
    const vine = await client.createConfiguration({
      name: 'net',
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': 'output "x" { value = 1 }\n' } },
    });
    await client.connectRepository('net', {
      provider: 'github',
      repository: 'acme/infra',
      branch: 'main',
      webhook: 'manual',
    });
    const deps = {
      clock: c.resolve<Clock>(coreServices.clock.id),
      random: c.resolve<Random>(coreServices.random.id),
      settings: c.resolve<CoreSettings>(coreServices.settings.id),
    };
    const head = 'f'.repeat(40);
    const job = await queueGitJob(uow, deps, { ownerId: userId, vineId: vine.id, trigger: pullRequestTrigger(head) });

    nock('https://api.github.com').post(`/repos/acme/infra/statuses/${head}`).reply(502, 'Bad Gateway');
    await running.controlPlane.useCases.vcsFeedback.deliverDue();
    const retrying = await trellis('jobs', 'show', job.id);
    expect(retrying.stdout).toMatch(
      /Git provider:\n +GitHub status \(pending\): retrying after 1 attempt: provider_unavailable/,
    );
    expect(retrying.stdout).not.toContain(TOKEN);

    const shown = JSON.parse((await trellis('jobs', 'show', job.id, '--json')).stdout);
    expect(shown.vcs_feedback).toEqual([
      expect.objectContaining({ kind: 'status', status: 'pending', state: 'pending', attempts: 1 }),
    ]);
    expect(shown.vcs_feedback[0].last_error).toContain('provider_unavailable');

    // A person's job has no git provider lines.
    const manual = await client.createJob({ job_type: 'PLAN', configuration_id: vine.id });
    expect((await trellis('jobs', 'show', manual.id)).stdout).not.toContain('Git provider:');
  });
});
