/**
 * The guards of git-driven runs (issue 23), on the core with its memory stores: pull requests
 * from forks and what their plans get, speculative plans reading the state only, one signature
 * check per delivery, replayed deliveries, and auto-deploy never going back to an older commit.
 */
import {
  type CommitRelation,
  type CommitStatus,
  ForbiddenError,
  type Job,
  sealProviderTokens,
  sealWebhookSecret,
  systemScope,
  TooLargeError,
  UnavailableError,
  UnauthorizedError,
  ValidationError,
  type VcsApi,
  type VcsArchive,
  type VcsConnection,
  type VcsEvent,
  type VineView,
} from '@trellis/core';
import {
  createTestCore,
  FakeRepositoryLister,
  pullRequestTrigger,
  queueGitJob,
  seedUser,
  seedVine,
  seedWorker,
  type TestCore,
  type TestUser,
  type TestWorker,
  providerArchive,
} from '@trellis/testkit/memory';
import { beforeEach, describe, expect, it } from 'vitest';
import { deliveryOf, eventDelivery, TestWebhookReader } from './gitDeliveries.js';
import { expectFailure } from './helpers.js';

const REPO = 'acme/infra';
const SHA = (digit: string) => digit.repeat(40);
const ROLE = 'arn:aws:iam::123456789012:role/deployer';
const SECRET = 'hook-secret';

class FakeVcsApi implements VcsApi {
  /** Issue 23: the control plane fetches the commit's archive for the claim. */
  async fetchArchive(): Promise<VcsArchive> {
    return providerArchive();
  }
  readonly maxCommentLength = 65536;
  readonly statuses: { sha: string; status: CommitStatus }[] = [];
  readonly comparisons: string[] = [];
  relations: Record<string, CommitRelation> = {};
  compareFails = false;
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
  async resolveCommit(_token: string, _repository: string, sha: string): Promise<string> {
    return sha;
  }
  async compareCommits(_token: string, _repository: string, base: string, head: string): Promise<CommitRelation> {
    this.comparisons.push(`${base}...${head}`);
    if (this.compareFails) throw new UnavailableError('provider_unavailable', 'GitHub answered 502');
    return this.relations[`${base}...${head}`] ?? 'ahead';
  }
}

let core: TestCore;
let api: FakeVcsApi;
let reader: TestWebhookReader;
let ada: TestUser;
let worker: TestWorker;
let vine: VineView;
let serial = 0;

beforeEach(async () => {
  api = new FakeVcsApi();
  reader = new TestWebhookReader();
  core = createTestCore({
    providers: { signIn: {}, repositories: { github: new FakeRepositoryLister() } },
    vcs: { github: { api, webhooks: reader, cloneUrl: (r) => `https://github.com/${r}.git` } },
    settings: {
      workloadIdentity: {
        issuer: 'https://trellis.example.test',
        algorithm: 'RS256',
        tokenLifetimeSeconds: 3600,
        keyRotationSeconds: 0,
      },
    },
  });
  ada = await seedUser(core, { email: 'ada@example.test' });
  worker = await seedWorker(core, ada, { heartbeat: true });
  vine = await seedVine(core, ada, {
    source: { type: 'git', url: `https://github.com/${REPO}.git`, ref: 'main', path: null },
    variables: { region: 'eu-west-1', db_password: { value: 'hunter2-db', sensitive: true } },
    cloud_identity: { kind: 'oidc', role_arn: ROLE },
  });
  await connect(vine);
});

async function connect(target: VineView, settings: Partial<VcsConnection> = {}, secret = SECRET) {
  const sealed = await sealWebhookSecret(core.secrets, target.id, secret);
  const token = await sealProviderTokens(
    core.secrets,
    { provider: 'github', provider_user_id: `gh-${ada.userId}` },
    { accessToken: 'gho-ada', refreshToken: null, expiresAt: null },
  );
  await core.uow.run(systemScope, async (stores) => {
    await stores.identities.upsert({
      user_id: ada.userId,
      provider: 'github',
      provider_user_id: `gh-${ada.userId}`,
      provider_token: token,
      scopes: 'repo',
    });
    await stores.vcs.put({
      vine_id: target.id,
      owner_id: target.owner_id,
      provider: 'github',
      repository: REPO,
      branch: 'main',
      paths: [],
      auto_deploy: false,
      pull_requests: true,
      fork_pull_requests: 'off',
      webhook_mode: 'manual',
      hook_id: null,
      webhook_secret_sealed: sealed,
      connected_by: ada.userId,
      created_at: core.clock.now().toISOString(),
      updated_at: core.clock.now().toISOString(),
      ...settings,
    });
  });
}

async function setConnection(settings: Partial<VcsConnection>) {
  await core.uow.run(systemScope, async (stores) => {
    const current = (await stores.vcs.get(vine.owner_id, vine.id)) as VcsConnection;
    await stores.vcs.put({ ...current, ...settings });
  });
}

const receive = (event: VcsEvent, id = `d-${++serial}`) =>
  core.useCases.gitEvents.receive('github', eventDelivery(vine.id, event, SECRET, id));

const pullRequest = (head: string, fork: boolean): VcsEvent => ({
  kind: 'pull_request',
  action: 'opened',
  repository: REPO,
  number: 7,
  title: 'Status page',
  url: `https://github.com/${REPO}/pull/7`,
  head_sha: head,
  head_branch: 'status-page',
  base_branch: 'main',
  author: 'mallory',
  fork,
});

const push = (commit: string, before: string | null = null): VcsEvent => ({
  kind: 'push',
  repository: REPO,
  branch: 'main',
  deleted: false,
  before_sha: before,
  commit_sha: commit,
  commit_message: `commit ${commit.slice(0, 1)}`,
  author: 'rosa',
  changed_files: ['main.tf'],
});

const jobsOfVine = () => [...core.uow.snapshot().jobs.values()].filter((job) => job.vine_id === vine.id);
const deploys = () => jobsOfVine().filter((job) => job.job_type === 'DEPLOY');
const logOf = (jobId: string) =>
  core.uow
    .snapshot()
    .logs.filter((stored) => stored.chunk.job_id === jobId)
    .map((stored) => stored.chunk.log_chunk)
    .join('');

/** Claims `job`, uploads a plan for a PLAN, and reports success with `add` changes. */
async function succeed(job: Job, add = 1): Promise<void> {
  const claimed = await core.useCases.jobs.claim(worker);
  expect(claimed?.job.id).toBe(job.id);
  if (job.job_type === 'PLAN') {
    await core.useCases.planArtifacts.upload(
      worker,
      job.id,
      (async function* () {
        yield new TextEncoder().encode('plan');
      })(),
    );
  }
  await core.useCases.jobs.reportStatus(worker, job.id, {
    status: 'SUCCESS',
    execution_metadata: { plan_summary: { add, change: 0, destroy: 0 } },
  });
}

describe('pull requests from forks', () => {
  it('off (the default): no plan, a neutral status saying why, answered like an ignored event', async () => {
    const { jobs } = await receive(pullRequest(SHA('a'), true));
    expect(jobs).toEqual([]);
    expect(jobsOfVine()).toEqual([]);
    expect(api.statuses).toEqual([
      {
        sha: SHA('a'),
        status: expect.objectContaining({
          state: 'neutral',
          description: expect.stringContaining('forks are off'),
          context: expect.stringMatching(/^trellis\/.+\//),
        }),
      },
    ]);
    // The repository's own pull requests still plan.
    expect((await receive(pullRequest(SHA('b'), false))).jobs).toHaveLength(1);
  });

  it('without_secrets: the claim carries no sensitive variable, identity or clone credential, and says so', async () => {
    await setConnection({ fork_pull_requests: 'without_secrets' });
    const job = (await receive(pullRequest(SHA('a'), true))).jobs[0] as Job;
    expect(job.trigger).toMatchObject({ type: 'pull_request', fork: true, secrets_withheld: true });
    const claimed = await core.useCases.jobs.claim(worker);
    expect(claimed?.job.id).toBe(job.id);
    expect(claimed?.job.config_snapshot.variables).toEqual({ region: { value: 'eu-west-1', sensitive: false } });
    expect(JSON.stringify(claimed)).not.toContain('hunter2-db');
    expect(claimed?.cloud_identity).toBeNull();
    expect(claimed?.identity_token).toBeNull();
    // No configuration version either: the control plane fetches nothing of a fork's with its people's tokens.
    expect(claimed?.configuration_version).toBeNull();
    expect(claimed).not.toHaveProperty('source_credentials');
    expect(claimed?.state_access).toBe('read');
    expect(claimed?.state_token).toEqual(expect.any(String));
    // The agent's own read of the job is as bare.
    expect(JSON.stringify(await core.useCases.jobs.getForWorker(worker, job.id))).not.toContain('hunter2-db');
    expect(logOf(job.id)).toContain('gets no sensitive variables (db_password), no cloud identity');
  });

  it('with_secrets: planned like the repository’s own, and still only reads the state', async () => {
    await setConnection({ fork_pull_requests: 'with_secrets' });
    const job = (await receive(pullRequest(SHA('a'), true))).jobs[0] as Job;
    expect(job.trigger).toMatchObject({ fork: true, secrets_withheld: false });
    const claimed = await core.useCases.jobs.claim(worker);
    expect(claimed?.job.config_snapshot.variables.db_password).toEqual({ value: 'hunter2-db', sensitive: true });
    expect(claimed?.cloud_identity).toMatchObject({ kind: 'oidc' });
    expect(claimed?.identity_token).toEqual(expect.any(String));
    // The commit comes as a configuration version the control plane fetched; the token never reaches the agent.
    expect(claimed?.configuration_version?.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(claimed)).not.toContain('gho-ada');
    expect(claimed?.state_access).toBe('read');
  });
});

describe('the state of speculative plans', () => {
  const lockInfo = { ID: 'lock-1', Operation: 'OperationTypePlan', Who: 'agent' };
  async function* state(): AsyncIterable<Uint8Array> {
    yield Buffer.from('{"version":4,"serial":1,"lineage":"l-1"}');
  }

  it("a pull request's plan reads the state but never writes, locks or unlocks it (403 state_read_only)", async () => {
    await queueGitJob(core.uow, core.deps, {
      ownerId: ada.userId,
      vineId: vine.id,
      trigger: pullRequestTrigger(SHA('a')),
    });
    const claimed = await core.useCases.jobs.claim(worker);
    expect(claimed?.state_access).toBe('read');
    expect(await core.useCases.states.read(worker, vine.id)).toBeNull();
    await expectFailure(core.useCases.states.write(worker, vine.id, null, state()), ForbiddenError, 'state_read_only');
    await expectFailure(core.useCases.states.lock(worker, vine.id, lockInfo), ForbiddenError, 'state_read_only');
    await expectFailure(core.useCases.states.unlock(worker, vine.id, lockInfo), ForbiddenError, 'state_read_only');
  });

  it('a drift check reads only; a push plan may lock and write', async () => {
    const drift = await core.uow.run(systemScope, (stores) =>
      stores.jobs.create({ ...(jobsOfVine()[0] ?? templateJob()), trigger: { type: 'drift' } }),
    );
    const claimedDrift = await core.useCases.jobs.claim(worker);
    expect(claimedDrift?.job.id).toBe(drift.id);
    expect(claimedDrift?.state_access).toBe('read');
    await expectFailure(core.useCases.states.lock(worker, vine.id, lockInfo), ForbiddenError, 'state_read_only');
    await core.useCases.jobs.reportStatus(worker, drift.id, { status: 'SUCCESS' });

    await queueGitJob(core.uow, core.deps, {
      ownerId: ada.userId,
      vineId: vine.id,
      trigger: {
        type: 'push',
        provider: 'github',
        repository: REPO,
        branch: 'main',
        commit_sha: SHA('c'),
        commit_message: 'x',
        author: 'rosa',
      },
    });
    const claimedPush = await core.useCases.jobs.claim(worker);
    expect(claimedPush?.state_access).toBe('write');
    expect(await core.useCases.states.lock(worker, vine.id, lockInfo)).toMatchObject({ acquired: true });
    expect(await core.useCases.states.write(worker, vine.id, 'lock-1', state())).toMatchObject({ serial: 1 });
  });
});

function templateJob(): Job {
  return {
    id: '00000000-0000-4000-8000-00000000d1f7',
    owner_id: vine.owner_id,
    job_type: 'PLAN',
    status: 'QUEUED',
    config_snapshot: { vine: null, source: null, variables: {}, engine: null, cloud_identity_id: null },
    config_hash: 'x',
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
    trigger: { type: 'drift' },
    created_by: null,
    caused_by: null,
    claimed_policies: null,
    approval: null,
    policy_override: null,
    created_at: core.clock.now().toISOString(),
    claimed_at: null,
    finished_at: null,
  };
}

describe('what a delivery costs', () => {
  it('one signature check, against the connection its URL names, however many connect the repository', async () => {
    for (let i = 0; i < 5; i += 1) {
      const other = await seedVine(core, ada, {
        source: { type: 'git', url: `https://github.com/${REPO}.git`, ref: 'main', path: null },
      });
      await connect(other, {}, `other-secret-${i}`);
    }
    const before = reader.checks;
    await expectFailure(
      core.useCases.gitEvents.receive('github', eventDelivery(vine.id, push(SHA('1')), 'guess', 'x-1')),
      UnauthorizedError,
      'webhook_signature_invalid',
    );
    expect((await receive(push(SHA('1')))).jobs).toHaveLength(1);
    expect(reader.checks - before).toBe(2);
  });

  it('an unknown connection costs no check; a URL naming none is malformed; an oversized body is 413', async () => {
    const before = reader.checks;
    const unknown = await core.useCases.gitEvents.receive(
      'github',
      eventDelivery('00000000-0000-4000-8000-000000000000', push(SHA('1')), SECRET, 'x-2'),
    );
    expect(unknown.jobs).toEqual([]);
    expect(reader.checks).toBe(before);
    await expectFailure(
      core.useCases.gitEvents.receive('github', eventDelivery(undefined, push(SHA('1')), SECRET, 'x-3')),
      ValidationError,
      'validation_failed',
    );
    const big = deliveryOf(vine.id, Buffer.alloc(26 * 1024 * 1024, 32), SECRET, 'x-4', 64 * 1024);
    await expectFailure(core.useCases.gitEvents.receive('github', big), TooLargeError, 'webhook_too_large');
    // A body larger than it said is cut off as it streams.
    const lying = {
      ...deliveryOf(vine.id, Buffer.alloc(26 * 1024 * 1024, 32), SECRET, 'x-5', 64 * 1024),
      declaredBytes: 10,
    };
    await expectFailure(core.useCases.gitEvents.receive('github', lying), TooLargeError, 'webhook_too_large');
  });
});

describe('replayed deliveries', () => {
  it('the same signed body under a new delivery id queues nothing', async () => {
    expect((await receive(push(SHA('1')), 'first')).jobs).toHaveLength(1);
    expect((await receive(push(SHA('1')), 'replayed-under-a-new-id')).jobs).toEqual([]);
    expect(jobsOfVine()).toHaveLength(1);
  });

  it('auto-deploy: a push not newer than the deployed commit is planned, never deployed by itself', async () => {
    await setConnection({ auto_deploy: true });
    const first = (await receive(push(SHA('2')))).jobs[0] as Job;
    expect(first.trigger).toMatchObject({ ancestry: 'newer' });
    expect(api.comparisons).toEqual([]);
    await succeed(first);
    await succeed(deploys()[0] as Job);

    // An old push (its body differs from any remembered one): the provider says it is behind.
    api.relations[`${SHA('2')}...${SHA('1')}`] = 'behind';
    const old = (await receive(push(SHA('1')))).jobs[0] as Job;
    expect(api.comparisons).toEqual([`${SHA('2')}...${SHA('1')}`]);
    expect(old.trigger).toMatchObject({ ancestry: 'not_newer' });
    expect(logOf(old.id)).toContain(`commit ${SHA('1')} is not newer than ${SHA('2')}`);
    await succeed(old);
    expect(deploys()).toHaveLength(1);

    // The same commit again is not newer either, without asking.
    const again = (await receive({ ...push(SHA('2')), commit_message: 'pushed again' } as VcsEvent)).jobs[0] as Job;
    expect(again.trigger).toMatchObject({ ancestry: 'not_newer' });
    expect(api.comparisons).toHaveLength(1);

    // A newer one is deployed.
    const next = (await receive(push(SHA('3'), SHA('2')))).jobs[0] as Job;
    expect(next.trigger).toMatchObject({ ancestry: 'newer' });
    expect(api.comparisons.at(-1)).toBe(`${SHA('2')}...${SHA('3')}`);
  });

  it('a provider that cannot compare leaves the plan undeployed', async () => {
    await setConnection({ auto_deploy: true });
    await succeed((await receive(push(SHA('2')))).jobs[0] as Job);
    await succeed(deploys()[0] as Job);
    api.compareFails = true;
    const plan = (await receive(push(SHA('3')))).jobs[0] as Job;
    expect(plan.trigger).toMatchObject({ ancestry: 'unknown' });
    await succeed(plan);
    expect(deploys()).toHaveLength(1);
  });

  it('a plan overtaken by the deploy of a newer plan is not deployed (approvals out of order)', async () => {
    await setConnection({ auto_deploy: true });
    await core.uow.modify((state) => {
      (state.vines.get(vine.id) as unknown as { approval: unknown }).approval = {
        required: true,
        separate_approver: false,
      };
    });
    const older = (await receive(push(SHA('1')))).jobs[0] as Job;
    await succeed(older);
    const newer = (await receive(push(SHA('2'), SHA('1')))).jobs[0] as Job;
    expect(newer.trigger).toMatchObject({ ancestry: 'newer' });
    await succeed(newer);
    await core.useCases.planReviews.approve(ada, newer.id, {});
    expect(deploys().map((job) => job.plan_job_id)).toEqual([newer.id]);
    await core.useCases.planReviews.approve(ada, older.id, {});
    expect(deploys().map((job) => job.plan_job_id)).toEqual([newer.id]);
  });
});
