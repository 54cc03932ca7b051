import {
  ConflictError,
  ForbiddenError,
  UnavailableError,
  type GitProvider,
  type Job,
  sealProviderTokens,
  sealWebhookSecret,
  systemScope,
  touchesPaths,
  UnauthorizedError,
  ValidationError,
  type CommitRelation,
  type VcsApi,
  type VcsArchive,
  type VcsConnection,
  type VcsEvent,
  type VineView,
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
} from '@trellis/testkit/memory';
import { beforeEach, describe, expect, it } from 'vitest';
import { deliveryOf, eventDelivery, TestWebhookReader } from './gitDeliveries.js';
import { expectFailure } from './helpers.js';

const REPO = 'acme/infra';
const SHA_1 = '1111111111111111111111111111111111111111';
const SHA_2 = '2222222222222222222222222222222222222222';
const SHA_0 = '0000000000000000000000000000000000000abc';

class FakeVcsApi implements VcsApi {
  /** Issue 23: the control plane fetches the commit's archive for the claim. */
  async fetchArchive(): Promise<VcsArchive> {
    return providerArchive();
  }
  readonly maxCommentLength = 65536;
  readonly compares: { token: string; repository: string; base: string; head: string }[] = [];
  files: string[] = [];
  async createHook(): Promise<{ hook_id: string }> {
    return { hook_id: '1' };
  }
  async deleteHook(): Promise<void> {}
  async setCommitStatus(): Promise<void> {}
  async upsertPullRequestComment(): Promise<{ comment_id: string }> {
    return { comment_id: '1' };
  }
  async changedFiles(token: string, repository: string, base: string, head: string): Promise<string[]> {
    this.compares.push({ token, repository, base, head });
    return this.files;
  }
  /** What `compareCommits` answers for `<base>...<head>` (default: ahead). */
  relations: Record<string, CommitRelation> = {};
  readonly comparisons: string[] = [];
  async compareCommits(_token: string, _repository: string, base: string, head: string): Promise<CommitRelation> {
    this.comparisons.push(`${base}...${head}`);
    return this.relations[`${base}...${head}`] ?? 'ahead';
  }
  readonly resolved: string[] = [];
  async resolveCommit(_token: string, _repository: string, sha: string): Promise<string> {
    this.resolved.push(sha);
    if (sha === SHA_2.slice(0, 12)) return SHA_2;
    throw new UnavailableError('provider_unavailable', 'Bitbucket answered 502');
  }
}

let core: TestCore;
let api: FakeVcsApi;
let reader: TestWebhookReader;
let ada: TestUser;
let worker: TestWorker;
let vine: VineView;
let deliveries = 0;

beforeEach(async () => {
  api = new FakeVcsApi();
  reader = new TestWebhookReader();
  core = createTestCore({
    providers: { signIn: {}, repositories: { github: new FakeRepositoryLister() } },
    vcs: {
      github: {
        api,
        webhooks: reader,
        cloneUrl: (repository) => `https://github.com/${repository}.git`,
      },
    },
  });
  ada = await seedUser(core);
  worker = await seedWorker(core, ada, { heartbeat: true });
  vine = await seedVine(core, ada, {
    source: { type: 'git', url: `https://github.com/${REPO}.git`, ref: 'main', path: null },
  });
  await connect(ada, vine, 'secret-ada');
});

async function connect(owner: TestUser, target: VineView, secret: string, settings: Partial<VcsConnection> = {}) {
  const sealed = await sealWebhookSecret(core.secrets, target.id, secret);
  const token = await sealProviderTokens(
    core.secrets,
    { provider: 'github', provider_user_id: `gh-${owner.userId}` },
    { accessToken: `gho-${owner.email}`, refreshToken: null, expiresAt: null },
  );
  await core.uow.run(systemScope, async (stores) => {
    await stores.identities.upsert({
      user_id: owner.userId,
      provider: 'github',
      provider_user_id: `gh-${owner.userId}`,
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
      connected_by: owner.userId,
      created_at: core.clock.now().toISOString(),
      updated_at: core.clock.now().toISOString(),
      ...settings,
    });
  });
}

/** A delivery of `event` to the hook URL of `target` (Ada's vine unless told). */
function request(
  event: VcsEvent,
  secret: string | null = 'secret-ada',
  id = `delivery-${++deliveries}`,
  target: { id: string } = vine,
) {
  return eventDelivery(target.id, event, secret, id);
}

function push(overrides: Partial<Extract<VcsEvent, { kind: 'push' }>> = {}): VcsEvent {
  return {
    kind: 'push',
    repository: REPO,
    branch: 'main',
    deleted: false,
    before_sha: SHA_0,
    commit_sha: SHA_1,
    commit_message: 'dns: add the status page record',
    author: 'Rosa Moreau',
    changed_files: ['infra/dns/status.tf', 'README.md'],
    ...overrides,
  };
}

function pullRequest(overrides: Partial<Extract<VcsEvent, { kind: 'pull_request' }>> = {}): VcsEvent {
  return {
    kind: 'pull_request',
    action: 'opened',
    repository: REPO,
    number: 7,
    title: 'Add the status page',
    url: `https://github.com/${REPO}/pull/7`,
    head_sha: SHA_1,
    head_branch: 'status-page',
    base_branch: 'main',
    author: 'rosa',
    fork: false,
    ...overrides,
  };
}

const receive = (req: ReturnType<typeof request>, provider: GitProvider = 'github') =>
  core.useCases.gitEvents.receive(provider, req);
const allJobs = () => [...core.uow.snapshot().jobs.values()];
const jobsOf = (id = vine.id) => allJobs().filter((job) => job.vine_id === id);

async function setConnection(settings: Partial<VcsConnection>, target = vine) {
  await core.uow.run(systemScope, async (stores) => {
    const current = await stores.vcs.get(target.owner_id, target.id);
    await stores.vcs.put({ ...(current as VcsConnection), ...settings });
  });
}

/** Claims the next job (it must be `job`), uploads a plan file for a PLAN, and reports `report`. */
async function run(job: Job, report: Record<string, unknown>): Promise<Job> {
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
  return core.useCases.jobs.reportStatus(worker, job.id, report as { status: unknown });
}

describe('pushes', () => {
  it('a signed push to the branch queues a PLAN of that exact commit, audited as system work', async () => {
    const { jobs } = await receive(request(push()));
    expect(jobs).toHaveLength(1);
    const job = jobs[0] as Job;
    expect(job).toMatchObject({
      job_type: 'PLAN',
      status: 'QUEUED',
      vine_id: vine.id,
      trigger: {
        type: 'push',
        provider: 'github',
        repository: REPO,
        branch: 'main',
        commit_sha: SHA_1,
        commit_message: 'dns: add the status page record',
        author: 'Rosa Moreau',
      },
    });
    expect(job.config_snapshot.source).toEqual({
      type: 'git',
      url: `https://github.com/${REPO}.git`,
      ref: 'main',
      path: null,
      commit: SHA_1,
    });
    const shown = await core.useCases.jobs.get(ada, job.id);
    expect(shown.speculative).toBe(false);
    const audit = [...core.uow.snapshot().audit.values()].find((entry) => entry.target.id === job.id);
    expect(audit).toMatchObject({
      action: 'job.create',
      actor: { type: 'system', id: null },
      details: { trigger: 'push', commit_sha: SHA_1, delivery_id: expect.stringMatching(/^delivery-/) },
    });
  });

  it('each commit has its own config hash', async () => {
    const first = (await receive(request(push()))).jobs[0] as Job;
    const second = (await receive(request(push({ before_sha: SHA_1, commit_sha: SHA_2 })))).jobs[0] as Job;
    expect(second.config_snapshot.source).toMatchObject({ commit: SHA_2 });
    expect(second.config_hash).not.toBe(first.config_hash);
  });

  it('with paths, a push plans only when a changed file matches one of them', async () => {
    await setConnection({ paths: ['infra/dns/**', 'modules/*.tf'] });
    expect((await receive(request(push({ changed_files: ['docs/index.md', 'README.md'] })))).jobs).toEqual([]);
    expect((await receive(request(push({ changed_files: ['infra/network/main.tf'] })))).jobs).toEqual([]);
    expect((await receive(request(push({ changed_files: ['docs/x.md', 'infra/dns/a/b.tf'] })))).jobs).toHaveLength(1);
    expect((await receive(request(push({ changed_files: ['modules/vpc.tf'] })))).jobs).toHaveLength(1);
    expect(jobsOf()).toHaveLength(2);
    expect(api.compares).toEqual([]);
  });

  it('a truncated push asks the compare API with the connecting user token', async () => {
    await setConnection({ paths: ['infra/**'] });
    api.files = ['docs/readme.md'];
    expect((await receive(request(push({ changed_files: null })))).jobs).toEqual([]);
    expect(api.compares).toEqual([{ token: `gho-${ada.email}`, repository: REPO, base: SHA_0, head: SHA_1 }]);
    api.files = ['docs/readme.md', 'infra/main.tf'];
    expect((await receive(request(push({ changed_files: null, commit_sha: SHA_2 })))).jobs).toHaveLength(1);
    expect(api.compares).toHaveLength(2);
  });

  it('a new branch (no commit before) touches every path', async () => {
    await setConnection({ paths: ['infra/**'] });
    expect((await receive(request(push({ changed_files: null, before_sha: null })))).jobs).toHaveLength(1);
    expect(api.compares).toEqual([]);
  });

  it('a tag, a deleted branch and another branch plan nothing', async () => {
    expect((await receive(request(push({ branch: null })))).jobs).toEqual([]);
    expect((await receive(request(push({ deleted: true, changed_files: [] })))).jobs).toEqual([]);
    expect((await receive(request(push({ branch: 'develop' })))).jobs).toEqual([]);
    expect(allJobs()).toEqual([]);
  });

  it('a push cancels the vine queued drift checks, as run triggers do', async () => {
    const drift = await core.uow.run(systemScope, (stores) => stores.jobs.create(driftJob()));
    await receive(request(push()));
    expect(core.uow.snapshot().jobs.get(drift.id)?.status).toBe('CANCELLED');
  });
});

function driftJob(): Job {
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
    created_at: core.clock.now().toISOString(),
    claimed_at: null,
    finished_at: null,
  };
}

describe('verification and redeliveries', () => {
  it('a wrong or missing signature is refused (401) and creates nothing', async () => {
    await expectFailure(receive(request(push(), 'not-the-secret')), UnauthorizedError, 'webhook_signature_invalid');
    await expectFailure(receive(request(push(), null)), UnauthorizedError, 'webhook_signature_invalid');
    expect(allJobs()).toEqual([]);
  });

  it('another repository signed with the secret, a ping and other events create nothing', async () => {
    expect((await receive(request(push({ repository: 'acme/other' })))).jobs).toEqual([]);
    expect((await receive(request({ kind: 'ping' }))).jobs).toEqual([]);
    expect((await receive(request({ kind: 'other', name: 'issues' }))).jobs).toEqual([]);
    expect(allJobs()).toEqual([]);
  });

  it('a signed request that is not a delivery (no event header) is malformed', async () => {
    await expectFailure(receive(deliveryOf(vine.id, Buffer.from('{}'), 'secret-ada', null)), ValidationError);
  });

  it('a provider this server has no ports for answers like an unknown repository', async () => {
    expect((await receive(request(push()), 'gitlab')).jobs).toEqual([]);
    expect(allJobs()).toEqual([]);
  });

  it('a redelivery (same delivery id) queues nothing new', async () => {
    expect((await receive(request(push(), 'secret-ada', 'same'))).jobs).toHaveLength(1);
    expect((await receive(request(push(), 'secret-ada', 'same'))).jobs).toEqual([]);
    expect(jobsOf()).toHaveLength(1);
  });

  it('two owners connecting one repository: each hook URL acts for its own connection only', async () => {
    const bob = await seedUser(core);
    const bobsVine = await seedVine(core, bob, {
      source: { type: 'git', url: `https://github.com/${REPO}.git`, ref: 'main', path: null },
    });
    await connect(bob, bobsVine, 'secret-bob');
    // Bob's secret on Ada's hook URL is not Ada's connection's.
    await expectFailure(
      receive(request(push(), 'secret-bob', 'one-event')),
      UnauthorizedError,
      'webhook_signature_invalid',
    );
    const forBob = await receive(request(push(), 'secret-bob', 'one-event', bobsVine));
    expect(forBob.jobs.map((job) => job.vine_id)).toEqual([bobsVine.id]);
    // The same event id delivered to Ada's hook still plans Ada's vine.
    const forAda = await receive(request(push(), 'secret-ada', 'one-event'));
    expect(forAda.jobs.map((job) => job.vine_id)).toEqual([vine.id]);
    expect(jobsOf(bobsVine.id)).toHaveLength(1);
    expect(jobsOf(vine.id)).toHaveLength(1);
  });
});

describe('pull requests', () => {
  it('a pull request into the branch queues a speculative PLAN of its head commit', async () => {
    const job = (await receive(request(pullRequest()))).jobs[0] as Job;
    expect(job).toMatchObject({
      job_type: 'PLAN',
      trigger: { type: 'pull_request', number: 7, head_sha: SHA_1, base_branch: 'main', head_branch: 'status-page' },
    });
    expect(job.config_snapshot.source).toMatchObject({ commit: SHA_1 });
    expect((await core.useCases.jobs.get(ada, job.id)).speculative).toBe(true);
    expect((await core.useCases.jobs.list(ada)).items[0]?.speculative).toBe(true);
  });

  it("a head named by a prefix (Bitbucket's 12 characters) is planned at its full commit", async () => {
    const job = (await receive(request(pullRequest({ head_sha: SHA_2.slice(0, 12) })))).jobs[0] as Job;
    expect(api.resolved).toEqual([SHA_2.slice(0, 12)]);
    expect(job.trigger).toMatchObject({ type: 'pull_request', head_sha: SHA_2 });
    expect(job.config_snapshot.source).toMatchObject({ commit: SHA_2 });
  });

  it('a prefix the provider cannot resolve fails the delivery, which a redelivery may retry', async () => {
    const delivery = () => request(pullRequest({ head_sha: 'abcdef123456' }), 'secret-ada', 'retried');
    await expectFailure(receive(delivery()), UnavailableError, 'provider_unavailable');
    expect(jobsOf()).toEqual([]);
    api.resolveCommit = async () => SHA_1;
    expect((await receive(delivery())).jobs).toHaveLength(1);
  });

  it('a new commit cancels the older queued plans of the same pull request only', async () => {
    const first = (await receive(request(pullRequest()))).jobs[0] as Job;
    const other = (await receive(request(pullRequest({ number: 8 })))).jobs[0] as Job;
    const second = (await receive(request(pullRequest({ action: 'updated', head_sha: SHA_2 })))).jobs[0] as Job;
    const stored = core.uow.snapshot().jobs;
    expect(stored.get(first.id)?.status).toBe('CANCELLED');
    expect(stored.get(first.id)?.error_message).toContain('#7');
    expect(stored.get(other.id)?.status).toBe('QUEUED');
    expect(stored.get(second.id)?.status).toBe('QUEUED');
    expect(core.events.published).toContainEqual({
      type: 'job_status_changed',
      owner_id: vine.owner_id,
      job_id: first.id,
      status: 'CANCELLED',
    });
    expect(core.events.published).toContainEqual({ type: 'job_queued', owner_id: vine.owner_id, job_id: second.id });
  });

  it('a pull request into another branch, or with pull requests off, plans nothing', async () => {
    expect((await receive(request(pullRequest({ base_branch: 'develop' })))).jobs).toEqual([]);
    await setConnection({ pull_requests: false });
    expect((await receive(request(pullRequest()))).jobs).toEqual([]);
    expect(allJobs()).toEqual([]);
  });

  it("leaves the vine's status alone and can never be deployed (409 plan_speculative)", async () => {
    const job = (await receive(request(pullRequest()))).jobs[0] as Job;
    const before = core.uow.snapshot().vines.get(vine.id)?.status;
    await run(job, { status: 'SUCCESS', execution_metadata: { plan_summary: { add: 1, change: 0, destroy: 0 } } });
    expect(core.uow.snapshot().vines.get(vine.id)?.status).toBe(before);
    const refused = await expectFailure(
      core.useCases.jobs.create(ada, { job_type: 'DEPLOY', configuration_id: vine.id, plan_job_id: job.id }),
      ConflictError,
      'plan_speculative',
    );
    expect(refused.message).toContain('pull request');
  });
});

describe('auto_deploy', () => {
  const changes = (add: number) => ({
    status: 'SUCCESS',
    execution_metadata: { plan_summary: { add, change: 0, destroy: 0 } },
  });

  it('a successful push plan with changes queues a DEPLOY of that plan, at its commit', async () => {
    await setConnection({ auto_deploy: true });
    const plan = (await receive(request(push()))).jobs[0] as Job;
    await run(plan, changes(2));
    const deploys = jobsOf().filter((job) => job.job_type === 'DEPLOY');
    expect(deploys).toHaveLength(1);
    expect(deploys[0]).toMatchObject({
      plan_job_id: plan.id,
      config_hash: plan.config_hash,
      trigger: { type: 'push', commit_sha: SHA_1 },
    });
    const audit = [...core.uow.snapshot().audit.values()].find((entry) => entry.target.id === deploys[0]?.id);
    expect(audit).toMatchObject({ actor: { type: 'system' }, details: { auto_deploy: true, plan_job_id: plan.id } });
  });

  it('a plan without changes, a failed plan, or auto_deploy off deploys nothing', async () => {
    await setConnection({ auto_deploy: true });
    const none = (await receive(request(push()))).jobs[0] as Job;
    await run(none, changes(0));
    const failed = (await receive(request(push({ commit_sha: SHA_2 })))).jobs[0] as Job;
    await run(failed, { status: 'FAILED', error_message: 'boom' });
    await setConnection({ auto_deploy: false });
    const off = (await receive(request(push({ commit_message: 'the same commit, pushed again' })))).jobs[0] as Job;
    await run(off, changes(3));
    expect(jobsOf().filter((job) => job.job_type === 'DEPLOY')).toEqual([]);
  });

  it('a plan whose agent reported no result of a policy its claim carried is never auto-deployed (issue 23)', async () => {
    await setConnection({ auto_deploy: true });
    const policy = await core.useCases.policies.create(ada, {
      name: 'checked',
      enforcement: 'mandatory',
      module: 'package trellis.checked\n\ndeny contains msg if {\n  false\n  msg := "never"\n}\n',
    });
    const unchecked = (await receive(request(push()))).jobs[0] as Job;
    await run(unchecked, changes(2));
    expect(jobsOf().filter((job) => job.job_type === 'DEPLOY')).toEqual([]);
    const checked = (await receive(request(push({ commit_sha: SHA_2 })))).jobs[0] as Job;
    await run(checked, {
      status: 'SUCCESS',
      execution_metadata: {
        plan_summary: { add: 2, change: 0, destroy: 0 },
        policy_results: [
          { policy_id: policy.id, version: 1, name: 'checked', enforcement: 'mandatory', passed: true, messages: [] },
        ],
      },
    });
    expect(
      jobsOf()
        .filter((job) => job.job_type === 'DEPLOY')
        .map((job) => job.plan_job_id),
    ).toEqual([checked.id]);
  });

  it('a plan that failed a mandatory policy, or of a vine that requires approval, is left for people', async () => {
    await setConnection({ auto_deploy: true });
    const failing = (await receive(request(push()))).jobs[0] as Job;
    const policyResults = [
      {
        policy_id: vine.id,
        version: 1,
        name: 'no-public-buckets',
        enforcement: 'mandatory',
        passed: false,
        messages: ['x'],
      },
    ];
    await run(failing, {
      ...changes(1),
      execution_metadata: { ...changes(1).execution_metadata, policy_results: policyResults },
    });
    await core.uow.modify((state) => {
      (state.vines.get(vine.id) as unknown as { approval: unknown }).approval = {
        required: true,
        separate_approver: false,
      };
    });
    const unapproved = (await receive(request(push({ commit_sha: SHA_2 })))).jobs[0] as Job;
    await run(unapproved, changes(1));
    expect(jobsOf().filter((job) => job.job_type === 'DEPLOY')).toEqual([]);
  });

  it('with approval required, the push plan waits; its approval queues the DEPLOY of that plan', async () => {
    await setConnection({ auto_deploy: true });
    await core.uow.modify((state) => {
      (state.vines.get(vine.id) as unknown as { approval: unknown }).approval = {
        required: true,
        separate_approver: false,
      };
    });
    const plan = (await receive(request(push()))).jobs[0] as Job;
    await run(plan, changes(1));
    expect(jobsOf().filter((job) => job.job_type === 'DEPLOY')).toEqual([]);

    // The branch moved on meanwhile: the plan is of its own commit, so it is not stale.
    await receive(request(push({ commit_sha: SHA_2 })));
    const approved = await core.useCases.planReviews.approve(ada, plan.id, { comment: 'ship it' });
    expect(approved.approval).toMatchObject({ decision: 'approved', comment: 'ship it' });
    const deploys = jobsOf().filter((job) => job.job_type === 'DEPLOY');
    expect(deploys).toHaveLength(1);
    expect(deploys[0]).toMatchObject({
      plan_job_id: plan.id,
      config_hash: plan.config_hash,
      trigger: { type: 'push', commit_sha: SHA_1 },
    });
  });

  it('a pull request plan can be neither approved nor deployed', async () => {
    await setConnection({ auto_deploy: true });
    const job = (await receive(request(pullRequest()))).jobs[0] as Job;
    await run(job, changes(1));
    await expectFailure(core.useCases.planReviews.approve(ada, job.id, {}), ConflictError, 'plan_speculative');
  });

  it('the stale-plan guard: a configuration changed since the plan is not deployed', async () => {
    await setConnection({ auto_deploy: true });
    const plan = (await receive(request(push()))).jobs[0] as Job;
    await core.useCases.jobs.claim(worker);
    await core.uow.modify((state) => {
      state.vines.get(vine.id)!.variables.region = { value: 'eu-west-1', sensitive: false };
    });
    await core.useCases.planArtifacts.upload(
      worker,
      plan.id,
      (async function* () {
        yield new TextEncoder().encode('plan');
      })(),
    );
    await core.useCases.jobs.reportStatus(worker, plan.id, changes(1));
    expect(jobsOf().filter((job) => job.job_type === 'DEPLOY')).toEqual([]);
  });

  it('a person may deploy a push plan: the DEPLOY pins the same commit', async () => {
    const plan = (await receive(request(push()))).jobs[0] as Job;
    await run(plan, changes(1));
    const deploy = await core.useCases.jobs.create(ada, {
      job_type: 'DEPLOY',
      configuration_id: vine.id,
      plan_job_id: plan.id,
    });
    expect(deploy.config_snapshot.source).toMatchObject({ commit: SHA_1 });
    expect(deploy.config_hash).toBe(plan.config_hash);
  });
});

describe('touchesPaths', () => {
  it('no paths or unknown files: every push; globs match nested and dot files', () => {
    expect(touchesPaths(['a.txt'], [])).toBe(true);
    expect(touchesPaths(null, ['infra/**'])).toBe(true);
    expect(touchesPaths(['infra/.terraform.lock.hcl'], ['infra/**'])).toBe(true);
    expect(touchesPaths(['infrastructure/main.tf'], ['infra/**'])).toBe(false);
    expect(touchesPaths([], ['infra/**'])).toBe(false);
  });
});

describe('the separate approver of a push plan (issue 23)', () => {
  it("the pusher signed in with that account caused the push's plan: they may not approve it", async () => {
    await core.useCases.drift.configure(ada, vine.id, { approval: { required: true, separate_approver: true } });
    const [planned] = (await receive(request(push({ sender_id: `gh-${ada.userId}` })))).jobs;
    expect(planned).toMatchObject({ created_by: null, caused_by: ada.userId });
    await run(planned as Job, {
      status: 'SUCCESS',
      execution_metadata: { plan_summary: { add: 1, change: 0, destroy: 0 } },
    });
    const error = await expectFailure(
      core.useCases.planReviews.approve(ada, (planned as Job).id),
      ForbiddenError,
      'separate_approver_required',
    );
    expect(error.message).toContain('caused by you');
    expect((await core.useCases.jobWaiting.show(ada, (planned as Job).id)).actions?.approve).toMatchObject({
      allowed: false,
      code: 'separate_approver_required',
    });
  });

  it('a push by an account nobody signed in with has no known cause', async () => {
    await core.useCases.drift.configure(ada, vine.id, { approval: { required: true, separate_approver: true } });
    const [planned] = (await receive(request(push({ sender_id: 'gh-somebody-else' })))).jobs;
    expect(planned).toMatchObject({ created_by: null, caused_by: null });
    await run(planned as Job, {
      status: 'SUCCESS',
      execution_metadata: { plan_summary: { add: 1, change: 0, destroy: 0 } },
    });
    await expect(core.useCases.planReviews.approve(ada, (planned as Job).id)).resolves.toMatchObject({
      approval: { decision: 'approved' },
    });
  });
});
