import { identityTokenContext, systemScope, type VcsConnection, type VineView } from '@trellis/core';
import {
  createTestCore,
  FakeRepositoryLister,
  seedUser,
  seedVine,
  seedWorker,
  type TestCore,
  type TestUser,
  type TestWorker,
} from '@trellis/testkit/memory';
import { beforeEach, describe, expect, it } from 'vitest';

let core: TestCore;
let ada: TestUser;
let worker: TestWorker;
let vine: VineView;
const TOKEN = 'gho_ada_clone_token_0123456789';

async function link(provider: 'github' | 'gitlab', token: string): Promise<void> {
  const sealed = await core.secrets.seal(token, identityTokenContext(provider, 'p-1'));
  await core.uow.run(systemScope, (stores) =>
    stores.identities.upsert({
      user_id: ada.userId,
      provider,
      provider_user_id: 'p-1',
      provider_token: sealed,
      scopes: '',
    }),
  );
}

async function connect(provider: VcsConnection['provider'], vineId = vine.id): Promise<void> {
  const at = core.clock.now().toISOString();
  await core.uow.run(systemScope, (stores) =>
    stores.vcs.put({
      vine_id: vineId,
      owner_id: vine.owner_id,
      provider,
      repository: 'ada/infra',
      branch: 'main',
      paths: [],
      auto_deploy: false,
      pull_requests: true,
      webhook_mode: 'manual',
      hook_id: null,
      webhook_secret_sealed: 'sealed',
      connected_by: ada.userId,
      created_at: at,
      updated_at: at,
    }),
  );
}

beforeEach(async () => {
  core = createTestCore({
    providers: { signIn: {}, repositories: { github: new FakeRepositoryLister(), gitlab: new FakeRepositoryLister() } },
  });
  ada = await seedUser(core);
  worker = await seedWorker(core, ada, { heartbeat: true });
  vine = await seedVine(core, ada, {
    source: { type: 'git', url: 'https://github.com/ada/infra.git', ref: 'main', path: null },
  });
});

const plan = (id = vine.id) => core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: id });

describe('the clone credentials of a claim', () => {
  it.each([
    ['github', 'x-access-token'],
    ['gitlab', 'oauth2'],
  ] as const)('carries the connecting user’s %s token with the username %s', async (provider, username) => {
    await link(provider, TOKEN);
    await connect(provider);
    const job = await plan();
    const claimed = await core.useCases.jobs.claim(worker);
    expect(claimed?.source_credentials).toEqual({ username, password: TOKEN });
    // Never stored with the job or its snapshot.
    expect(JSON.stringify(core.uow.snapshot().jobs.get(job.id))).not.toContain(TOKEN);
    expect(JSON.stringify(await core.useCases.jobs.get(ada, job.id))).not.toContain(TOKEN);
  });

  it('is null for a vine without a connection, and for an inline source', async () => {
    await link('github', TOKEN);
    await plan();
    expect((await core.useCases.jobs.claim(worker))?.source_credentials).toBeNull();
    const inline = await seedVine(core, ada);
    await connect('github', inline.id);
    await plan(inline.id);
    expect((await core.useCases.jobs.claim(worker))?.source_credentials).toBeNull();
  });

  it('lets the claim stand without credentials when the token cannot be had, and says why in the job log', async () => {
    await connect('github');
    const job = await plan();
    const claimed = await core.useCases.jobs.claim(worker);
    expect(claimed?.job.id).toBe(job.id);
    expect(claimed?.source_credentials).toBeNull();
    const logs = await core.useCases.logs.readForPerson(ada, job.id);
    expect(logs.logs.map((chunk) => chunk.log_chunk).join('')).toMatch(
      /no credentials for cloning ada\/infra: .*not linked to GitHub/,
    );
  });
});
