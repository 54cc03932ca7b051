/**
 * Webhook deliveries to feedback (issue 13): the jobs GitEventUseCases queues owe their commit a
 * pending status; a pull request's older queued plan, cancelled by a newer commit, reports `error`
 * on its own commit; an auto-deployed DEPLOY of a push reports on the pushed commit.
 */
import {
  type CommitStatus,
  type Job,
  sealProviderTokens,
  sealWebhookSecret,
  systemScope,
  type VcsApi,
  type VcsArchive,
  type VcsEvent,
} from '@trellis/core';
import {
  createTestCore,
  FakeRepositoryLister,
  seedUser,
  seedVine,
  seedWorker,
  type TestCore,
  providerArchive,
  outboxRows,
} from '@trellis/testkit/memory';
import { beforeEach, describe, expect, it } from 'vitest';
import { eventDelivery, TestWebhookReader } from './gitDeliveries.js';

const REPO = 'acme/infra';
const SHA_1 = '1'.repeat(40);
const SHA_2 = '2'.repeat(40);

class StatusRecorder implements VcsApi {
  /** Issue 23: the control plane fetches the commit's archive for the claim. */
  async fetchArchive(): Promise<VcsArchive> {
    return providerArchive();
  }
  readonly maxCommentLength = 65536;
  readonly statuses: { sha: string; status: CommitStatus }[] = [];
  async createHook(): Promise<{ hook_id: string }> {
    return { hook_id: '1' };
  }
  async deleteHook(): Promise<void> {}
  async setCommitStatus(_token: string, _repository: string, sha: string, status: CommitStatus): Promise<void> {
    this.statuses.push({ sha, status });
  }
  async upsertPullRequestComment(): Promise<{ comment_id: string }> {
    return { comment_id: '1' };
  }
  async changedFiles(): Promise<string[]> {
    return [];
  }
  async compareCommits(): Promise<'ahead'> {
    return 'ahead';
  }
}

let core: TestCore;
let api: StatusRecorder;
let deliveries = 0;

const pullRequest = (head: string): VcsEvent => ({
  kind: 'pull_request',
  action: 'opened',
  repository: REPO,
  number: 7,
  title: 'Status page',
  url: `https://github.com/${REPO}/pull/7`,
  head_sha: head,
  head_branch: 'status-page',
  base_branch: 'main',
  author: 'rosa',
  fork: false,
});

const receive = (event: VcsEvent) =>
  core.useCases.gitEvents.receive('github', eventDelivery(vineId, event, 'hook-secret', `d-${++deliveries}`));
const states = () => api.statuses.map(({ sha, status }) => [sha.slice(0, 1), status.state, status.description]);

let vineId: string;

describe('feedback of webhook-queued jobs', () => {
  let worker: Awaited<ReturnType<typeof seedWorker>>;

  beforeEach(async () => {
    api = new StatusRecorder();
    core = createTestCore({
      providers: { signIn: {}, repositories: { github: new FakeRepositoryLister() } },
      vcs: { github: { api, webhooks: new TestWebhookReader(), cloneUrl: (r) => `https://github.com/${r}.git` } },
    });
    const ada = await seedUser(core);
    worker = await seedWorker(core, ada, { heartbeat: true });
    const vine = await seedVine(core, ada, {
      source: { type: 'git', url: `https://github.com/${REPO}.git`, ref: 'main', path: null },
    });
    vineId = vine.id;
    const sealed = await sealWebhookSecret(core.secrets, vine.id, 'hook-secret');
    const token = await sealProviderTokens(
      core.secrets,
      { provider: 'github', provider_user_id: 'gh-ada' },
      { accessToken: 'gho-ada', refreshToken: null, expiresAt: null },
    );
    await core.uow.run(systemScope, async (stores) => {
      await stores.identities.upsert({
        user_id: ada.userId,
        provider: 'github',
        provider_user_id: 'gh-ada',
        provider_token: token,
        scopes: 'repo',
      });
      await stores.vcs.put({
        vine_id: vine.id,
        owner_id: vine.owner_id,
        provider: 'github',
        repository: REPO,
        branch: 'main',
        paths: [],
        auto_deploy: true,
        pull_requests: true,
        fork_pull_requests: 'off',
        webhook_mode: 'manual',
        hook_id: null,
        webhook_secret_sealed: sealed,
        connected_by: ada.userId,
        created_at: core.clock.now().toISOString(),
        updated_at: core.clock.now().toISOString(),
      });
    });
  });

  it('a pull request plan is pending at once; a newer commit cancels it: error on the old commit, pending on the new', async () => {
    const first = (await receive(pullRequest(SHA_1))).jobs[0] as Job;
    await core.useCases.vcsFeedback.deliverDue();
    expect(states()).toEqual([['1', 'pending', 'Plan queued']]);
    await receive({ ...pullRequest(SHA_2), action: 'updated' } as VcsEvent);
    await core.useCases.vcsFeedback.deliverDue();
    expect(states().slice(1)).toEqual([
      ['1', 'error', 'Plan cancelled'],
      ['2', 'pending', 'Plan queued'],
    ]);
    expect(core.uow.snapshot().jobs.get(first.id)?.status).toBe('CANCELLED');
  });

  it('an auto-deployed push plan: the DEPLOY reports on the pushed commit', async () => {
    const plan = (
      await receive({
        kind: 'push',
        repository: REPO,
        branch: 'main',
        deleted: false,
        before_sha: null,
        commit_sha: SHA_1,
        commit_message: 'more',
        author: 'rosa',
        changed_files: null,
      })
    ).jobs[0] as Job;
    expect((await core.useCases.jobs.claim(worker))?.job.id).toBe(plan.id);
    await core.useCases.planArtifacts.upload(
      worker,
      plan.id,
      (async function* () {
        yield new TextEncoder().encode('plan');
      })(),
    );
    await core.useCases.jobs.reportStatus(worker, plan.id, {
      status: 'SUCCESS',
      execution_metadata: { plan_summary: { add: 1, change: 0, destroy: 0 } },
    });
    const deploy = [...core.uow.snapshot().jobs.values()].find(
      (job) => job.job_type === 'DEPLOY' && job.vine_id === vineId,
    );
    expect(deploy?.plan_job_id).toBe(plan.id);
    await core.useCases.vcsFeedback.deliverDue();
    // One status per vine and commit: the DEPLOY's pending status supersedes the plan's, unsent.
    expect(states()).toEqual([['1', 'pending', 'Deploy queued']]);
    const statuses = outboxRows(core.uow.snapshot(), 'vcs_feedback').map((item) => [
      item.job_id === plan.id,
      item.status,
    ]);
    expect(statuses).toEqual([
      [true, 'superseded'],
      [true, 'superseded'],
      [false, 'delivered'],
    ]);
  });
});
