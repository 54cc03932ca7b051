import {
  type CommitStatus,
  configHash,
  cutComment,
  DEFAULT_NOTIFICATION_SETTINGS,
  DEFAULT_OUTBOX_SETTINGS,
  enqueueVcsFeedback,
  type Job,
  ownerScope,
  sealProviderTokens,
  snapshotOfVine,
  systemScope,
  UnavailableError,
  type VcsApi,
  type VcsArchive,
  type VcsJobTrigger,
} from '@trellis/core';
import {
  createTestCore,
  FakeRepositoryLister,
  seedUser,
  seedVine,
  seedWorker,
  type TestCore,
  type TestUser,
  type TestWorker,
  providerArchive,
  outboxRows,
} from '@trellis/testkit/memory';
import { beforeEach, describe, expect, it } from 'vitest';

type Call =
  | { op: 'status'; token: string; repository: string; sha: string; status: CommitStatus }
  | { op: 'comment'; token: string; repository: string; number: number; comment_id: string | null; body: string };

/** A provider API that records each call; `down` makes every call fail like an outage. */
class RecordingVcsApi implements VcsApi {
  /** Issue 23: the control plane fetches the commit's archive for the claim. */
  async fetchArchive(): Promise<VcsArchive> {
    return providerArchive();
  }
  readonly calls: Call[] = [];
  down = 0;
  /** Comment ids someone deleted at the provider: an edit of one creates a new comment, as the adapters do. */
  readonly deleted = new Set<string>();
  private nextComment = 100;
  constructor(readonly maxCommentLength = 65_536) {}
  async createHook(): Promise<{ hook_id: string }> {
    throw new Error('not used');
  }
  async deleteHook(): Promise<void> {}
  async changedFiles(): Promise<string[]> {
    return [];
  }
  async setCommitStatus(token: string, repository: string, sha: string, status: CommitStatus): Promise<void> {
    this.fail();
    this.calls.push({ op: 'status', token, repository, sha, status });
  }
  async upsertPullRequestComment(
    token: string,
    repository: string,
    number: number,
    comment: { comment_id: string | null; body: string },
  ): Promise<{ comment_id: string }> {
    this.fail();
    this.calls.push({ op: 'comment', token, repository, number, ...comment });
    if (comment.comment_id !== null && !this.deleted.has(comment.comment_id)) return { comment_id: comment.comment_id };
    return { comment_id: String(this.nextComment++) };
  }
  private fail(): void {
    if (this.down > 0) {
      this.down -= 1;
      throw new UnavailableError('provider_unavailable', 'GitHub answered 502 Bad Gateway');
    }
  }
}

const REPO = 'acme/infra';
const SHA = 'a'.repeat(40);
const WEB = 'https://trellis.example.com';

let core: TestCore;
let api: RecordingVcsApi;
let ada: TestUser;
let worker: TestWorker;
let vine: { id: string; name: string; vineyard_id: string };

async function setup(maxCommentLength?: number, maxAttempts = 10) {
  api = new RecordingVcsApi(maxCommentLength);
  core = createTestCore({
    now: '2026-05-01T00:00:00.000Z',
    providers: { signIn: {}, repositories: { github: new FakeRepositoryLister() } },
    vcs: {
      github: {
        api,
        webhooks: { parse: () => null, verify: () => false },
        cloneUrl: (r) => `https://github.com/${r}.git`,
      },
    },
    settings: {
      notifications: { ...DEFAULT_NOTIFICATION_SETTINGS, webUrl: WEB },
      outbox: { ...DEFAULT_OUTBOX_SETTINGS, vcsFeedbackMaxAttempts: maxAttempts },
    },
  });
  ada = await seedUser(core, { email: 'ada@example.test' });
  const vineyard = await core.useCases.vineyards.create(ada, { name: 'prod' });
  vine = await seedVine(core, ada, { name: 'network', vineyard_id: vineyard.id });
  worker = await seedWorker(core, ada, { heartbeat: true });
  const sealed = await sealProviderTokens(
    core.secrets,
    { provider: 'github', provider_user_id: 'gh-1' },
    { accessToken: 'gho_secret_token', refreshToken: null, expiresAt: null },
  );
  await core.uow.run(systemScope, async (stores) => {
    await stores.identities.upsert({
      user_id: ada.userId,
      provider: 'github',
      provider_user_id: 'gh-1',
      provider_token: sealed,
      scopes: 'repo',
    });
  });
  await core.uow.run(ownerScope(ada.userId), (stores) =>
    stores.vcs.put({
      vine_id: vine.id,
      owner_id: ada.userId,
      provider: 'github',
      repository: REPO,
      branch: 'main',
      paths: [],
      auto_deploy: false,
      pull_requests: true,
      webhook_mode: 'manual',
      hook_id: null,
      webhook_secret_sealed: 'sealed',
      connected_by: ada.userId,
      created_at: core.clock.now().toISOString(),
      updated_at: core.clock.now().toISOString(),
    }),
  );
}

const push: VcsJobTrigger = {
  type: 'push',
  provider: 'github',
  repository: REPO,
  branch: 'main',
  commit_sha: SHA,
  commit_message: 'more subnets',
  author: 'ada',
};

const pullRequest = (headSha: string): VcsJobTrigger => ({
  type: 'pull_request',
  provider: 'github',
  repository: REPO,
  number: 7,
  title: 'More subnets',
  url: `https://github.com/${REPO}/pull/7`,
  head_sha: headSha,
  head_branch: 'subnets',
  base_branch: 'main',
  author: 'ada',
});

/** Queues a git-triggered PLAN the way the webhook path does: the job and its pending status in one unit of work. */
async function queueGitJob(trigger: VcsJobTrigger): Promise<Job> {
  return core.uow.run(ownerScope(ada.userId), async (stores) => {
    const found = await stores.vines.get(ada.userId, vine.id);
    if (!found) throw new Error('no vine');
    const snapshot = snapshotOfVine(found);
    const job = await stores.jobs.create({
      id: core.random.uuid(),
      owner_id: ada.userId,
      job_type: 'PLAN',
      status: 'QUEUED',
      config_snapshot: snapshot,
      config_hash: configHash(snapshot),
      vine_id: vine.id,
      vineyard_id: vine.vineyard_id,
      cloud_identity_id: null,
      assigned_worker_id: null,
      claimed_by_worker_id: null,
      plan_job_id: null,
      target_worker_id: null,
      execution_metadata: {},
      error_message: null,
      vine_status_before: null,
      trigger,
      created_at: core.clock.now().toISOString(),
      claimed_at: null,
      finished_at: null,
    });
    await enqueueVcsFeedback(stores, core.deps, job, 'queued');
    return job;
  });
}

async function runToEnd(job: Job, report: { status: string; execution_metadata?: object; error_message?: string }) {
  const claimed = await core.useCases.jobs.claim(worker);
  expect(claimed?.job.id).toBe(job.id);
  return core.useCases.jobs.reportStatus(worker, job.id, report);
}

const PLAN_METADATA = {
  plan_summary: { add: 1, change: 0, destroy: 0 },
  resource_changes: [{ address: 'aws_subnet.b', actions: ['create'] }],
  resource_changes_omitted: 0,
};

const items = () => outboxRows(core.uow.snapshot(), 'vcs_feedback');

describe('feedback at the git provider', () => {
  beforeEach(async () => setup());

  it('sends a pending status when a pushed commit is queued, then success with the job URL', async () => {
    const job = await queueGitJob(push);
    expect(await core.useCases.vcsFeedback.deliverDue()).toHaveLength(1);
    expect(api.calls).toEqual([
      {
        op: 'status',
        token: 'gho_secret_token',
        repository: REPO,
        sha: SHA,
        status: {
          state: 'pending',
          context: 'trellis/prod/network',
          description: 'Plan queued',
          target_url: `${WEB}/jobs/${job.id}`,
        },
      },
    ]);
    await runToEnd(job, { status: 'SUCCESS', execution_metadata: PLAN_METADATA });
    await core.useCases.vcsFeedback.deliverDue();
    expect(api.calls[1]).toMatchObject({
      op: 'status',
      sha: SHA,
      status: { state: 'success', description: 'Plan: +1 ~0 -0', target_url: `${WEB}/jobs/${job.id}` },
    });
    // A push gets no comment.
    expect(api.calls.filter((call) => call.op === 'comment')).toEqual([]);
    expect(items().map((item) => item.status)).toEqual(['delivered', 'delivered']);
  });

  it('posts nothing with the token of a person who may no longer manage the owner (needs_reconnect)', async () => {
    const bob = await seedUser(core, { email: 'bob@example.test' });
    const sealed = await sealProviderTokens(
      core.secrets,
      { provider: 'github', provider_user_id: 'gh-2' },
      { accessToken: 'gho_bob_token', refreshToken: null, expiresAt: null },
    );
    await core.uow.run(systemScope, async (stores) => {
      await stores.identities.upsert({
        user_id: bob.userId,
        provider: 'github',
        provider_user_id: 'gh-2',
        provider_token: sealed,
        scopes: 'repo',
      });
      const connection = await stores.vcs.get(ada.userId, vine.id);
      if (!connection) throw new Error('no connection');
      // Bob connected ada's vine once; he is nobody to it now.
      await stores.vcs.put({ ...connection, connected_by: bob.userId });
    });
    await queueGitJob(push);
    await core.useCases.vcsFeedback.deliverDue();
    expect(api.calls).toEqual([]);
    expect(items()).toMatchObject([{ status: 'failed' }]);
    expect(JSON.stringify(items()[0])).toMatch(/no longer an admin/);
  });

  it('sends failure with the error when the plan fails, and error when it is cancelled', async () => {
    const failed = await queueGitJob(push);
    await runToEnd(failed, { status: 'FAILED', error_message: 'tofu plan exited 1' });
    const cancelled = await queueGitJob({ ...push, commit_sha: 'b'.repeat(40) });
    await core.useCases.jobs.cancel(ada, cancelled.id);
    await core.useCases.vcsFeedback.deliverDue();
    const statuses = api.calls.flatMap((call) =>
      call.op === 'status' ? [[call.sha[0], call.status.state, call.status.description]] : [],
    );
    // Each commit's pending status was superseded by its end before it was sent: only the end is sent.
    expect(statuses).toEqual([
      ['a', 'failure', 'Plan failed: tofu plan exited 1'],
      ['b', 'error', 'Plan cancelled'],
    ]);
    expect(items().map((item) => item.status)).toEqual(['superseded', 'delivered', 'superseded', 'delivered']);
  });

  it("writes a pull request plan's comment, then edits the same comment with the next plan", async () => {
    const first = await queueGitJob(pullRequest(SHA));
    await runToEnd(first, { status: 'SUCCESS', execution_metadata: PLAN_METADATA });
    await core.useCases.vcsFeedback.deliverDue();
    const comments = () => api.calls.filter((call) => call.op === 'comment');
    expect(comments()).toHaveLength(1);
    const [created] = comments();
    expect(created).toMatchObject({ repository: REPO, number: 7, comment_id: null });
    expect(created?.body).toContain('### Trellis plan: `network` in `prod`');
    expect(created?.body).toContain('`+1 ~0 -0`');
    expect(created?.body).toContain('| + create | `aws_subnet.b` |');
    expect(created?.body).toContain(`[Open the job in Trellis](${WEB}/jobs/${first.id})`);

    const second = await queueGitJob(pullRequest('c'.repeat(40)));
    await runToEnd(second, {
      status: 'SUCCESS',
      execution_metadata: {
        plan_summary: { add: 0, change: 1, destroy: 1 },
        resource_changes: [
          { address: 'aws_subnet.b', actions: ['update'] },
          { address: 'aws_subnet.a', actions: ['delete'] },
        ],
        policy_results: [
          {
            policy_id: 'p',
            version: 2,
            name: 'no-destroy',
            enforcement: 'mandatory',
            passed: false,
            messages: ['aws_subnet.a is destroyed'],
          },
        ],
      },
    });
    await core.useCases.vcsFeedback.deliverDue();
    expect(comments()).toHaveLength(2);
    const edited = comments()[1];
    expect(edited).toMatchObject({ number: 7, comment_id: '100' });
    expect(edited?.body).toContain('| - destroy | `aws_subnet.a` |');
    expect(edited?.body).toContain('❌ failed: `no-destroy` v2 (mandatory)');
    expect(edited?.body).toContain('aws_subnet.a is destroyed');
    const lastStatus = api.calls.filter((call) => call.op === 'status').at(-1);
    expect(lastStatus).toMatchObject({ sha: 'c'.repeat(40), status: { state: 'failure' } });
    const refs = [...core.uow.snapshot().vcsComments.values()];
    expect(refs.map((ref) => ref.comment_id)).toEqual(['100']);
  });

  it('keeps the id of the comment the provider recreated after someone deleted it, and edits that one next', async () => {
    for (const head of ['a', 'b', 'c']) {
      const job = await queueGitJob(pullRequest(head.repeat(40)));
      await runToEnd(job, { status: 'SUCCESS', execution_metadata: PLAN_METADATA });
      await core.useCases.vcsFeedback.deliverDue();
      if (head === 'a') api.deleted.add('100');
    }
    const comments = api.calls.flatMap((call) => (call.op === 'comment' ? [call.comment_id] : []));
    expect(comments).toEqual([null, '100', '101']);
    expect([...core.uow.snapshot().vcsComments.values()].map((ref) => ref.comment_id)).toEqual(['101']);
  });

  it('retries a refused or unreachable provider with backoff and never touches the job', async () => {
    const job = await queueGitJob(push);
    await runToEnd(job, { status: 'SUCCESS', execution_metadata: PLAN_METADATA });
    api.down = 2;
    const [first] = await core.useCases.vcsFeedback
      .deliverDue()
      .then((r) => r.filter((x) => x.status !== 'superseded'));
    expect(first).toMatchObject({
      status: 'pending',
      attempts: 1,
      error: 'provider_unavailable: GitHub answered 502 Bad Gateway',
    });
    expect(JSON.stringify(items())).not.toContain('gho_secret_token');
    // Not due yet: nothing is sent before the backoff has passed.
    expect(await core.useCases.vcsFeedback.deliverDue()).toEqual([]);
    core.clock.advance(60_000);
    expect((await core.useCases.vcsFeedback.deliverDue())[0]).toMatchObject({ status: 'pending', attempts: 2 });
    core.clock.advance(120_000);
    expect((await core.useCases.vcsFeedback.deliverDue())[0]).toMatchObject({ status: 'delivered', attempts: 3 });
    expect(api.calls.map((call) => call.op === 'status' && call.status.state)).toEqual(['success']);
    const stored = await core.useCases.jobs.get(ada, job.id);
    expect(stored.status).toBe('SUCCESS');
  });

  it('gives up after the most attempts allowed', async () => {
    await setup(undefined, 2);
    await queueGitJob(push);
    api.down = 10;
    await core.useCases.vcsFeedback.deliverDue();
    core.clock.advance(3_600_000);
    const [last] = await core.useCases.vcsFeedback.deliverDue();
    expect(last).toMatchObject({ status: 'failed', attempts: 2 });
  });

  it("cuts a comment over the provider's limit, with a note to open the job", async () => {
    await setup(1200);
    const job = await queueGitJob(pullRequest(SHA));
    const many = Array.from({ length: 100 }, (_, i) => ({ address: `aws_subnet.s${i}`, actions: ['create'] }));
    await runToEnd(job, {
      status: 'SUCCESS',
      execution_metadata: { plan_summary: { add: 100, change: 0, destroy: 0 }, resource_changes: many },
    });
    await core.useCases.vcsFeedback.deliverDue();
    const comment = api.calls.find((call) => call.op === 'comment');
    expect(comment?.op === 'comment' && comment.body.length).toBeLessThanOrEqual(1200);
    expect(comment?.op === 'comment' && comment.body).toContain(
      "This comment was cut to fit the provider's size limit",
    );
    expect(comment?.op === 'comment' && comment.body).toContain(`${WEB}/jobs/${job.id}`);
    expect(comment?.op === 'comment' && comment.body).toContain('`aws_subnet.s0`');
    expect(cutComment('short', 1200, 'u')).toBe('short');
  });

  it('reports a lost agent as error, and says so in the pull request comment', async () => {
    const job = await queueGitJob(pullRequest(SHA));
    expect((await core.useCases.jobs.claim(worker))?.job.id).toBe(job.id);
    await core.useCases.jobs.reportStatus(worker, job.id, { status: 'PROCESSING' });
    core.clock.advance((core.settings.lostJobTimeoutSeconds + 1) * 1000);
    expect((await core.useCases.jobs.sweepLostJobs()).map((lost) => lost.id)).toEqual([job.id]);
    await core.useCases.vcsFeedback.deliverDue();
    expect(api.calls.find((call) => call.op === 'status')).toMatchObject({
      status: { state: 'error', description: 'Plan lost: its agent stopped answering' },
    });
    const comment = api.calls.find((call) => call.op === 'comment');
    expect(comment?.op === 'comment' && comment.body).toContain('**Plan lost**');
  });

  it('a failed pull request plan: failure status and the error in the comment', async () => {
    const job = await queueGitJob(pullRequest(SHA));
    await runToEnd(job, { status: 'FAILED', error_message: 'Error: Unsupported argument' });
    await core.useCases.vcsFeedback.deliverDue();
    const comment = api.calls.find((call) => call.op === 'comment');
    expect(comment?.op === 'comment' && comment.body).toContain('**Plan failed**');
    expect(comment?.op === 'comment' && comment.body).toContain('Error: Unsupported argument');
  });

  it('writes nothing for a job a person queued', async () => {
    await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
    expect(items()).toEqual([]);
  });
});
