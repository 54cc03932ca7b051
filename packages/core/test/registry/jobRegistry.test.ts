import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_MIRROR_SETTINGS, personalNamespace, RegistryNamespaces } from '@trellis/core';
import {
  createTestCore,
  FakeUpstreamRegistry,
  seedUser,
  seedVine,
  seedWorker,
  type TestCore,
  type TestUser,
  type TestWorker,
  tarGz,
} from '@trellis/testkit/memory';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'trellis-job-registry-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, 'terraform-provider-null_v3.2.4_x5'), 'a provider binary');
execFileSync('zip', ['-q', 'null.zip', 'terraform-provider-null_v3.2.4_x5'], { cwd: dir });
const ZIP = readFileSync(join(dir, 'null.zip'));
const NULL = { hostname: 'registry.opentofu.org', namespace: 'hashicorp', type: 'null' };

async function* bytes(): AsyncIterable<Uint8Array> {
  yield ZIP;
}

async function* bytesOf(data: Uint8Array): AsyncIterable<Uint8Array> {
  yield data;
}

let core: TestCore;
let ada: TestUser;
let bob: TestUser;
let worker: TestWorker;

beforeEach(async () => {
  core = createTestCore();
  ada = await seedUser(core);
  bob = await seedUser(core);
  worker = await seedWorker(core, ada, { heartbeat: true });
  await core.useCases.mirror.push(
    ada,
    personalNamespace(ada.userId),
    { ...NULL, version: '3.2.4', platform: 'linux_amd64' },
    bytes(),
  );
});

async function claimedJob() {
  const vine = await seedVine(core, ada);
  const job = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
  const claimed = await core.useCases.jobs.claim(worker);
  if (!claimed) throw new Error('nothing claimed');
  return { job, registry: claimed.registry };
}

describe("a job's registry token (issue 28)", () => {
  it("comes with the claim, with the owner's namespace and the providers its mirror holds", async () => {
    const { registry } = await claimedJob();
    expect(registry).toEqual({
      token: expect.stringMatching(/^trr_/),
      namespace: personalNamespace(ada.userId),
      mirror_providers: ['registry.opentofu.org/hashicorp/null'],
    });
  });

  it("is read in the claim's own unit of work: one per claim, none after it", async () => {
    const vine = await seedVine(core, ada);
    await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
    const runs = vi.spyOn(core.uow, 'run');
    const reads = vi.spyOn(core.uow, 'read');
    const claimed = await core.useCases.jobs.claim(worker);
    expect(claimed?.registry.mirror_providers).toEqual(['registry.opentofu.org/hashicorp/null']);
    expect(runs).toHaveBeenCalledTimes(1);
    expect(reads).not.toHaveBeenCalled();
  });

  it('lists every provider of the hostnames the mirror pulls through from', async () => {
    core = createTestCore({
      upstreamRegistry: new FakeUpstreamRegistry(),
      settings: {
        mirror: { ...DEFAULT_MIRROR_SETTINGS, upstreams: ['registry.opentofu.org', 'registry.example.com'] },
      },
    });
    ada = await seedUser(core);
    worker = await seedWorker(core, ada, { heartbeat: true });
    await core.useCases.mirror.push(
      ada,
      personalNamespace(ada.userId),
      { ...NULL, version: '3.2.4', platform: 'linux_amd64' },
      bytes(),
    );
    const { registry } = await claimedJob();
    expect(registry.mirror_providers).toEqual([
      'registry.opentofu.org/hashicorp/null',
      'registry.opentofu.org/*/*',
      'registry.example.com/*/*',
    ]);
  });

  it("reads its owner's mirror while the job runs, and nothing else", async () => {
    const { job, registry } = await claimedJob();
    const actor = await core.useCases.jobRegistry.authenticate(registry.token);
    expect((await core.useCases.mirror.versions(actor, personalNamespace(ada.userId), NULL)).versions).toEqual([
      '3.2.4',
    ]);
    // Another owner's namespace is not found, as for a stranger; a write is refused.
    await expect(core.useCases.mirror.versions(actor, personalNamespace(bob.userId), NULL)).rejects.toMatchObject({
      code: 'namespace_not_found',
    });
    await expect(
      new RegistryNamespaces(core.deps).resolve(actor, personalNamespace(ada.userId), 'registry.publish'),
    ).rejects.toMatchObject({ code: 'job_token_read_only' });
    // Once the job ends, its token is dead.
    await core.useCases.jobs.reportStatus(worker, job.id, { status: 'SUCCESS' });
    await expect(core.useCases.jobRegistry.authenticate(registry.token)).rejects.toMatchObject({
      code: 'invalid_token',
    });
  });

  it("downloads its owner's private modules too", async () => {
    const namespace = personalNamespace(ada.userId);
    const module = { namespace, name: 'vpc', system: 'aws', version: '1.0.0' };
    await core.useCases.registryModules.publish(ada, module, bytesOf(tarGz([{ path: 'main.tf', content: '' }])));
    const { registry } = await claimedJob();
    const actor = await core.useCases.jobRegistry.authenticate(registry.token);
    const { versions } = await core.useCases.registryModules.versions(actor, module);
    expect(versions.map((version) => version.version)).toEqual(['1.0.0']);
    expect(await core.useCases.registryModules.download(actor, module)).toMatchObject({ ownerId: ada.userId });
  });

  it('is refused when altered or made up', async () => {
    const { registry } = await claimedJob();
    const altered = `${registry.token.slice(0, -2)}${registry.token.endsWith('AA') ? 'BB' : 'AA'}`;
    await expect(core.useCases.jobRegistry.authenticate(altered)).rejects.toMatchObject({ code: 'invalid_token' });
    await expect(core.useCases.jobRegistry.authenticate('trr_made-up')).rejects.toMatchObject({
      code: 'invalid_token',
    });
  });

  it("lets people read their own mirror, and not another's", async () => {
    expect((await core.useCases.mirror.versions(ada, personalNamespace(ada.userId), NULL)).versions).toEqual(['3.2.4']);
    await expect(core.useCases.mirror.versions(bob, personalNamespace(ada.userId), NULL)).rejects.toMatchObject({
      code: 'namespace_not_found',
    });
  });
});
