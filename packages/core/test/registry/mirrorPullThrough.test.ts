import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createUseCases, DEFAULT_MIRROR_SETTINGS, type MirrorArchive, type MirrorPullTarget } from '@trellis/core';
import {
  addAcceptedMember,
  createTestCore,
  FakeUpstreamRegistry,
  seedUser,
  type TestCore,
  type TestUser,
} from '@trellis/testkit/memory';
import * as openpgp from 'openpgp';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'trellis-mirror-pull-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function zipOf(name: string, content: string): Buffer {
  writeFileSync(join(dir, name), content);
  execFileSync('zip', ['-q', '-X', `${name}.zip`, name], { cwd: dir });
  return readFileSync(join(dir, `${name}.zip`));
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const HOST = 'registry.example.com';
const PROVIDER = { hostname: HOST, namespace: 'acme', type: 'null' };
const LINUX = zipOf('terraform-provider-null_v1.0.0_x5', 'a provider for linux');
const DARWIN = zipOf('terraform-provider-null_v1.0.0', 'a provider for darwin');
const SHASUMS = [
  `${sha256(LINUX)}  terraform-provider-null_1.0.0_linux_amd64.zip`,
  `${sha256(DARWIN)}  terraform-provider-null_1.0.0_darwin_arm64.zip`,
  '',
].join('\n');

let key: { publicKey: string; privateKey: openpgp.PrivateKey };
let otherKey: { publicKey: string; privateKey: openpgp.PrivateKey };

async function newKey() {
  const generated = await openpgp.generateKey({ userIDs: [{ name: 'releases', email: 'releases@example.test' }] });
  return {
    publicKey: generated.publicKey,
    privateKey: await openpgp.readPrivateKey({ armoredKey: generated.privateKey }),
  };
}

async function sign(text: string, signer: openpgp.PrivateKey): Promise<Uint8Array> {
  const message = await openpgp.createMessage({ binary: Buffer.from(text) });
  return (await openpgp.sign({ message, signingKeys: signer, detached: true, format: 'binary' })) as Uint8Array;
}

/** The upstream serving acme/null 1.0.0 for linux_amd64 and darwin_arm64, signed by `key` unless told. */
async function publishUpstream(
  upstream: FakeUpstreamRegistry,
  options: { signer?: openpgp.PrivateKey; linuxZip?: Buffer; linuxShasum?: string } = {},
) {
  const signature = await sign(SHASUMS, options.signer ?? key.privateKey);
  const common = { provider: PROVIDER, version: '1.0.0', shasums: SHASUMS, signature, keys: [key.publicKey] };
  upstream.add({
    ...common,
    os: 'linux',
    arch: 'amd64',
    zip: options.linuxZip ?? LINUX,
    shasum: options.linuxShasum ?? sha256(LINUX),
  });
  upstream.add({ ...common, os: 'darwin', arch: 'arm64', zip: DARWIN, shasum: sha256(DARWIN) });
}

let core: TestCore;
let upstream: FakeUpstreamRegistry;
let admin: TestUser;
let viewer: TestUser;
let stranger: TestUser;
let orgId: string;

const pulls: MirrorPullTarget[] = [];
const urls = {
  archive: (archive: MirrorArchive) => `stored:${archive.id}`,
  pull: (target: MirrorPullTarget) => {
    pulls.push(target);
    return `pull:${target.os}_${target.arch}:${target.sha256}`;
  },
};

beforeAll(async () => {
  key = await newKey();
  otherKey = await newKey();
});

beforeEach(async () => {
  pulls.length = 0;
  upstream = new FakeUpstreamRegistry();
  core = createTestCore({
    upstreamRegistry: upstream,
    settings: { mirror: { ...DEFAULT_MIRROR_SETTINGS, upstreams: [HOST] } },
  });
  admin = await seedUser(core);
  viewer = await seedUser(core);
  stranger = await seedUser(core);
  orgId = (await core.useCases.orgs.create(admin, { name: 'acme' })).id;
  await addAcceptedMember(core.useCases, admin, orgId, viewer, 'viewer');
});

const mirrorKeys = () => core.artifacts.keys().filter((name) => name.startsWith('registry/mirror/'));

describe('pull-through of the provider mirror', () => {
  it("lists the origin registry's versions and platforms with their signed sha256, and pulls one archive once", async () => {
    await publishUpstream(upstream);
    const index = await core.useCases.mirror.versions(viewer, 'acme', PROVIDER);
    expect(index).toEqual({ versions: ['1.0.0'], upstreamFailure: null });

    const document = await core.useCases.mirror.version(viewer, 'acme', PROVIDER, '1.0.0', urls);
    expect(document.archives).toEqual({
      linux_amd64: { url: `pull:linux_amd64:${sha256(LINUX)}`, hashes: [`zh:${sha256(LINUX)}`] },
      darwin_arm64: { url: `pull:darwin_arm64:${sha256(DARWIN)}`, hashes: [`zh:${sha256(DARWIN)}`] },
    });
    // One SHA256SUMS and one signature for the version, whatever the number of platforms.
    expect(upstream.calls.filter((call) => call.startsWith('file '))).toHaveLength(2);
    expect(mirrorKeys()).toEqual([]);

    const target = pulls.find((each) => each.os === 'linux') as MirrorPullTarget;
    const [first, second] = await Promise.all([core.useCases.mirror.pull(target), core.useCases.mirror.pull(target)]);
    expect(first.id).toBe(second.id);
    expect(first).toMatchObject({ origin: 'pulled', created_by: null, sha256: sha256(LINUX), size: LINUX.byteLength });
    expect(first.h1).toMatch(/^h1:/);
    expect(upstream.downloads).toBe(1);
    expect(mirrorKeys()).toHaveLength(1);

    const listed = await core.useCases.mirror.list(viewer, 'acme', {});
    expect(listed.items.map((archive) => [archive.platform, archive.origin])).toEqual([['linux_amd64', 'pulled']]);
    const audit = await core.useCases.audit.list(admin, { org_id: orgId });
    const pulled = audit.items.filter((entry) => entry.action === 'registry.mirror.pull');
    expect(pulled).toHaveLength(1);
    expect(pulled[0]).toMatchObject({
      actor: { type: 'system' },
      details: { provider: `${HOST}/acme/null`, version: '1.0.0', platform: 'linux_amd64', upstream: HOST },
    });

    // Held now: served from the mirror, with its h1:, even once the origin registry is gone.
    upstream.down = true;
    const again = await core.useCases.mirror.version(viewer, 'acme', PROVIDER, '1.0.0', urls);
    expect(again.archives).toEqual({
      linux_amd64: { url: `stored:${first.id}`, hashes: [first.h1, `zh:${sha256(LINUX)}`] },
    });
    expect(again.upstreamFailure?.message).toContain('down');
    expect(await core.useCases.mirror.versions(viewer, 'acme', PROVIDER)).toMatchObject({ versions: ['1.0.0'] });
    expect((await core.useCases.mirror.pull(target)).id).toBe(first.id);
  });

  it('ends concurrent pulls of two replicas with one record and one file', async () => {
    await publishUpstream(upstream);
    await core.useCases.mirror.version(viewer, 'acme', PROVIDER, '1.0.0', urls);
    const target = pulls.find((each) => each.os === 'darwin') as MirrorPullTarget;
    const replica = createUseCases(core.deps).mirror;
    const [one, two] = await Promise.all([core.useCases.mirror.pull(target), replica.pull(target)]);
    expect(one.id).toBe(two.id);
    expect(upstream.downloads).toBe(2);
    expect(mirrorKeys()).toEqual([one.storage_key]);
    const audit = await core.useCases.audit.list(admin, { org_id: orgId });
    expect(audit.items.filter((entry) => entry.action === 'registry.mirror.pull')).toHaveLength(1);
  });

  it('is a clear 502 when the origin registry is down and the mirror holds nothing of the provider', async () => {
    upstream.down = true;
    await expect(core.useCases.mirror.versions(viewer, 'acme', PROVIDER)).rejects.toMatchObject({
      code: 'mirror_upstream_unavailable',
    });
    await expect(core.useCases.mirror.version(viewer, 'acme', PROVIDER, '1.0.0', urls)).rejects.toMatchObject({
      code: 'mirror_upstream_unavailable',
    });
  });

  it('refuses a SHA256SUMS signed by a key the registry does not name, and lists nothing', async () => {
    await publishUpstream(upstream, { signer: otherKey.privateKey });
    await expect(core.useCases.mirror.version(viewer, 'acme', PROVIDER, '1.0.0', urls)).rejects.toMatchObject({
      code: 'mirror_upstream_signature_invalid',
    });
    expect(pulls).toEqual([]);
    expect(mirrorKeys()).toEqual([]);
  });

  it('refuses a download whose shasum is not the signed one, and an archive whose bytes are not, storing nothing', async () => {
    await publishUpstream(upstream, { linuxShasum: 'f'.repeat(64) });
    await expect(core.useCases.mirror.version(viewer, 'acme', PROVIDER, '1.0.0', urls)).rejects.toMatchObject({
      code: 'mirror_upstream_shasum_mismatch',
    });

    const tampered = new FakeUpstreamRegistry();
    core = createTestCore({
      upstreamRegistry: tampered,
      settings: { mirror: { ...DEFAULT_MIRROR_SETTINGS, upstreams: [HOST] } },
    });
    const owner = await seedUser(core);
    await core.useCases.orgs.create(owner, { name: 'acme' });
    // The listing is right, the bytes served are another zip: caught as they stream in.
    await publishUpstream(tampered, { linuxZip: DARWIN });
    await core.useCases.mirror.version(owner, 'acme', PROVIDER, '1.0.0', urls);
    const target = pulls.find((each) => each.os === 'linux') as MirrorPullTarget;
    await expect(core.useCases.mirror.pull(target)).rejects.toMatchObject({ code: 'mirror_upstream_shasum_mismatch' });
    // Bytes that are not even a zip are the same mismatch, checked before the zip is read.
    const garbage = new FakeUpstreamRegistry();
    await publishUpstream(garbage, { linuxZip: Buffer.from('not a zip at all') });
    Object.assign(core.deps, { upstreamRegistry: garbage });
    await expect(createUseCases(core.deps).mirror.pull(target)).rejects.toMatchObject({
      code: 'mirror_upstream_shasum_mismatch',
    });
    expect(mirrorKeys()).toEqual([]);
    expect((await core.useCases.mirror.list(owner, 'acme', {})).items).toEqual([]);
  });

  it('never asks the origin registry of a hostname not listed, nor for a stranger', async () => {
    await publishUpstream(upstream);
    const other = { ...PROVIDER, hostname: 'registry.terraform.io' };
    await expect(core.useCases.mirror.versions(viewer, 'acme', other)).rejects.toMatchObject({
      code: 'mirror_provider_not_found',
    });
    await expect(core.useCases.mirror.version(viewer, 'acme', other, '1.0.0', urls)).rejects.toMatchObject({
      code: 'mirror_provider_not_found',
    });
    await expect(core.useCases.mirror.versions(stranger, 'acme', PROVIDER)).rejects.toMatchObject({
      code: 'namespace_not_found',
    });
    expect(upstream.calls).toEqual([]);
  });

  it('is off without the setting: only what was pushed is served', async () => {
    core = createTestCore({ upstreamRegistry: upstream });
    const owner = await seedUser(core);
    await core.useCases.orgs.create(owner, { name: 'acme' });
    await publishUpstream(upstream);
    await expect(core.useCases.mirror.versions(owner, 'acme', PROVIDER)).rejects.toMatchObject({
      code: 'mirror_provider_not_found',
    });
    expect(upstream.calls).toEqual([]);
  });
});
