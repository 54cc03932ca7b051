import { createHash } from 'node:crypto';
import {
  type ConfigurationVersion,
  identityTokenContext,
  systemScope,
  type VcsConnection,
  UnavailableError,
  type VineView,
} from '@trellis/core';
import {
  addAcceptedMember,
  chunksOf,
  createTestCore,
  FakeRepositoryLister,
  RecordingVcsApi,
  seedUser,
  seedVine,
  seedWorker,
  type TestCore,
  type TestUser,
  type TestWorker,
  tarGz,
} from '@trellis/testkit/memory';
import { beforeEach, describe, expect, it } from 'vitest';

const TOKEN = 'gho_ada_archive_token_0123456789';
const ARCHIVE = tarGz(
  [
    { path: 'ada-infra-1a2b3c4/', type: 'directory' },
    { path: 'ada-infra-1a2b3c4/main.tf', content: 'output "x" { value = 1 }\n' },
    { path: 'ada-infra-1a2b3c4/modules/net/main.tf', content: 'variable "cidr" {}\n' },
    { path: 'ada-infra-1a2b3c4/current', type: 'symlink', linkpath: 'modules/net' },
  ],
  { paxGlobalComment: '1a2b3c4d5e6f' },
);

let core: TestCore;
let api: RecordingVcsApi;
let ada: TestUser;

async function link(user: TestUser, token: string): Promise<void> {
  const sealed = await core.secrets.seal(token, identityTokenContext('github', `p-${user.userId}`));
  await core.uow.run(systemScope, (stores) =>
    stores.identities.upsert({
      user_id: user.userId,
      provider: 'github',
      provider_user_id: `p-${user.userId}`,
      provider_token: sealed,
      scopes: '',
    }),
  );
}

async function connect(vine: VineView, by: TestUser): Promise<void> {
  const at = core.clock.now().toISOString();
  const connection: VcsConnection = {
    vine_id: vine.id,
    owner_id: vine.owner_id,
    provider: 'github',
    repository: 'ada/infra',
    branch: 'main',
    paths: [],
    auto_deploy: false,
    pull_requests: true,
    fork_pull_requests: 'off',
    webhook_mode: 'manual',
    hook_id: null,
    webhook_secret_sealed: 'sealed',
    connected_by: by.userId,
    created_at: at,
    updated_at: at,
  };
  await core.uow.run(systemScope, (stores) => stores.vcs.put(connection));
}

const gitVine = (owner: TestUser, input: Record<string, unknown> = {}) =>
  seedVine(core, owner, {
    source: { type: 'git', url: 'https://github.com/ada/infra.git', ref: 'main', path: null },
    ...input,
  });

const versionsOf = (): ConfigurationVersion[] => [...core.uow.snapshot().configurationVersions.values()];

async function read(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

beforeEach(async () => {
  api = new RecordingVcsApi();
  core = createTestCore({
    providers: { signIn: {}, repositories: { github: new FakeRepositoryLister() } },
    vcs: {
      github: {
        api,
        webhooks: {} as never,
        cloneUrl: (repository) => `https://github.com/${repository}.git`,
      },
    },
  });
  ada = await seedUser(core);
});

describe('the claim of a connected vine’s job', () => {
  let worker: TestWorker;
  let vine: VineView;

  beforeEach(async () => {
    worker = await seedWorker(core, ada, { heartbeat: true });
    vine = await gitVine(ada);
    await link(ada, TOKEN);
    await connect(vine, ada);
  });

  it('carries a configuration version the control plane fetched, and no provider token', async () => {
    api.archives['ada/infra@main'] = ARCHIVE;
    const job = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
    const claimed = await core.useCases.jobs.claim(worker);
    expect(claimed?.job.id).toBe(job.id);
    const sha256 = createHash('sha256').update(ARCHIVE).digest('hex');
    expect(claimed?.configuration_version).toMatchObject({ sha256, size: ARCHIVE.length, strip_components: 1 });
    expect(claimed?.configuration_version?.url).toBe(
      `/api/jobs/${job.id}/configuration-versions/${claimed?.configuration_version?.id}`,
    );
    expect(claimed).not.toHaveProperty('source_credentials');
    expect(JSON.stringify(claimed)).not.toContain(TOKEN);
    // Fetched once (at queue time; the claim waited for that fetch), with the connecting person's token.
    expect(api.calls.filter((call) => call.method === 'fetchArchive')).toEqual([
      { method: 'fetchArchive', token: TOKEN, repository: 'ada/infra', ref: 'main' },
    ]);
    const [version] = versionsOf();
    expect(version).toMatchObject({ status: 'uploaded', source: 'git', sha256, ref: 'main', vine_id: vine.id });

    const download = await core.useCases.configurationVersions.download(
      worker,
      job.id,
      claimed?.configuration_version?.id,
    );
    expect(download.sha256).toBe(sha256);
    expect((await read(download.body)).equals(ARCHIVE)).toBe(true);
  });

  it('serves the tarball only to the agent that claimed the job', async () => {
    api.archives['ada/infra@main'] = ARCHIVE;
    const job = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
    const other = await seedWorker(core, ada, { heartbeat: true });
    const claimed = await core.useCases.jobs.claim(worker);
    await expect(
      core.useCases.configurationVersions.download(other, job.id, claimed?.configuration_version?.id),
    ).rejects.toMatchObject({ code: 'job_not_claimed_by_worker' });
  });

  it.each([
    ['a path climbing out of the root', [{ path: 'ada-infra-1/../../etc/cron.d/x', content: 'boom' }], /outside/],
    ['an absolute path', [{ path: '/etc/passwd', content: 'boom' }], /outside/],
    [
      'a symbolic link out of the root',
      [{ path: 'ada-infra-1/creds', type: 'symlink' as const, linkpath: '../../home/agent/.aws' }],
      /links to/,
    ],
    [
      'a hard link out of the root',
      [{ path: 'ada-infra-1/passwd', type: 'hardlink' as const, linkpath: '/etc/passwd' }],
      /links to/,
    ],
    ['a FIFO', [{ path: 'ada-infra-1/pipe', type: 'fifo' as const }], /not a file, directory or link/],
  ])('ends the job when the archive holds %s, and keeps no bytes', async (_what, entries, reason) => {
    api.archives['ada/infra@main'] = tarGz(entries);
    const job = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
    expect(await core.useCases.jobs.claim(worker)).toBeNull();
    const ended = await core.useCases.jobs.get(ada, job.id);
    expect(ended.status).toBe('FAILED');
    expect(ended.error_message).toMatch(/could not fetch ada\/infra at main: the configuration tarball is refused/);
    expect(ended.error_message).toMatch(reason);
    const [version] = versionsOf();
    expect(version).toMatchObject({ status: 'errored', error_code: 'configuration_invalid', sha256: null });
    expect(core.artifacts.keys()).toEqual([]);
  });

  it('refuses an archive that is not gzip', async () => {
    api.archives['ada/infra@main'] = new TextEncoder().encode('<html>not an archive</html>');
    const job = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
    expect(await core.useCases.jobs.claim(worker)).toBeNull();
    expect((await core.useCases.jobs.get(ada, job.id)).error_message).toMatch(/it is not gzip/);
  });

  it('ends the job with the provider’s reason when the archive cannot be fetched', async () => {
    api.fail.fetchArchive = new UnavailableError('provider_unavailable', 'no archive of ada/infra at main');
    const job = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
    expect(await core.useCases.jobs.claim(worker)).toBeNull();
    const ended = await core.useCases.jobs.get(ada, job.id);
    expect(ended.status).toBe('FAILED');
    expect(ended.error_message).toBe(
      'the control plane could not fetch ada/infra at main: no archive of ada/infra at main',
    );
    const logs = await core.useCases.logs.readForPerson(ada, job.id);
    expect(logs.logs.map((chunk) => chunk.log_chunk).join('')).toContain('could not fetch ada/infra at main');
  });

  it('gives jobs of other vines no configuration version', async () => {
    const inline = await seedVine(core, ada);
    await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: inline.id });
    expect((await core.useCases.jobs.claim(worker))?.configuration_version).toBeNull();
    expect(api.calls.filter((call) => call.method === 'fetchArchive')).toEqual([]);
  });
});

describe('ingesting a tarball (uploads reuse it)', () => {
  it('stores a good one with its digest, and refuses one over the entry limit of its root', async () => {
    const vine = await gitVine(ada);
    const versions = core.useCases.configurationVersions;
    const bytes = tarGz([{ path: 'main.tf', content: 'terraform {}\n' }]);
    const pending = await versions.create({
      owner_id: vine.owner_id,
      vine_id: vine.id,
      source: 'upload',
      strip_components: 0,
      created_by: ada.userId,
    });
    const stored = await versions.ingest(pending, chunksOf(bytes, 7));
    expect(stored).toMatchObject({
      status: 'uploaded',
      size: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    });
    // A stored version's bytes are never written again.
    await expect(versions.ingest(stored, chunksOf(bytes))).rejects.toMatchObject({
      code: 'configuration_version_not_ready',
    });
    const bad = await versions.create({
      owner_id: vine.owner_id,
      vine_id: vine.id,
      source: 'upload',
      strip_components: 0,
      created_by: ada.userId,
    });
    await expect(versions.ingest(bad, chunksOf(tarGz([{ path: '../x', content: '' }])))).rejects.toMatchObject({
      code: 'configuration_invalid',
    });
  });
});

describe('a connection whose person left its organization', () => {
  it('needs reconnecting: its jobs fail with needs_reconnect and nothing is fetched with their token', async () => {
    const bob = await seedUser(core);
    const org = await core.useCases.orgs.create(ada, { name: 'platform' });
    const membership = await addAcceptedMember(core.useCases, ada, org.id, bob, 'admin');
    const vineyard = await core.useCases.vineyards.create(ada, { name: 'prod', org_id: org.id });
    const vine = await gitVine(ada, { vineyard_id: vineyard.id });
    const registration = await core.useCases.workers.register(ada, { name: 'org-agent', org_id: org.id });
    const worker = await core.useCases.workers.authenticate(registration.worker_id, registration.worker_token);
    await link(bob, TOKEN);
    await connect(vine, bob);
    api.archives['ada/infra@main'] = ARCHIVE;

    // While bob is an admin, his token fetches the commit.
    const first = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
    expect((await core.useCases.jobs.claim(worker))?.configuration_version?.sha256).toMatch(/^[0-9a-f]{64}$/);
    await core.useCases.jobs.reportStatus(worker, first.id, { status: 'SUCCESS' });
    expect((await core.useCases.vcs.get(ada, vine.id)).status).toBe('connected');

    await core.useCases.orgs.setMemberRole(ada, org.id, membership, { role: 'operator' });
    api.calls.length = 0;
    expect((await core.useCases.vcs.get(ada, vine.id)).status).toBe('needs_reconnect');
    const job = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
    expect(await core.useCases.jobs.claim(worker)).toBeNull();
    const ended = await core.useCases.jobs.get(ada, job.id);
    expect(ended.status).toBe('FAILED');
    expect(ended.error_message).toMatch(/^needs_reconnect: the person who connected ada\/infra is no longer an admin/);
    expect(api.calls).toEqual([]);

    // The organization's tarballs go with it.
    expect(core.artifacts.keys().filter((key) => key.includes(org.id))).toHaveLength(1);
    await core.useCases.orgs.delete(ada, org.id);
    expect(core.artifacts.keys().filter((key) => key.includes(org.id))).toEqual([]);
  });
});
