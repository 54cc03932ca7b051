import { createHash, randomBytes } from 'node:crypto';
import {
  ConflictError,
  DEFAULT_REGISTRY_SETTINGS,
  ForbiddenError,
  NotFoundError,
  parseShasums,
  TooLargeError,
  UnprocessableError,
  ValidationError,
} from '@trellis/core';
import { chunksOf, createTestCore, seedUser, type TestCore, type TestUser } from '@trellis/testkit/memory';
import * as openpgp from 'openpgp';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectFailure } from '../usecases/helpers.js';

let core: TestCore;
let ada: TestUser;
let bob: TestUser;
let signer: { publicKey: string; privateKey: openpgp.PrivateKey; keyId: string };
let stranger: { publicKey: string; privateKey: openpgp.PrivateKey; keyId: string };

const ZIP = randomBytes(3000);
const ZIP_SHA = createHash('sha256').update(ZIP).digest('hex');
const SHASUMS = `${ZIP_SHA}  terraform-provider-null_1.0.0_linux_amd64.zip\n${'b'.repeat(64)}  terraform-provider-null_1.0.0_darwin_arm64.zip\n${'c'.repeat(64)}  terraform-provider-null_1.0.0_manifest.json\n`;

async function newKey(name: string) {
  const generated = await openpgp.generateKey({ userIDs: [{ name, email: `${name}@example.test` }] });
  const privateKey = await openpgp.readPrivateKey({ armoredKey: generated.privateKey });
  return { publicKey: generated.publicKey, privateKey, keyId: privateKey.getKeyID().toHex().toUpperCase() };
}

async function signatureOf(text: string, key: openpgp.PrivateKey, armored = false): Promise<string> {
  const message = await openpgp.createMessage({ binary: Buffer.from(text) });
  if (armored) {
    const armor = await openpgp.sign({ message, signingKeys: key, detached: true, format: 'armored' });
    return Buffer.from(armor as string).toString('base64');
  }
  const binary = await openpgp.sign({ message, signingKeys: key, detached: true, format: 'binary' });
  return Buffer.from(binary as Uint8Array).toString('base64');
}

/** An organization `acme` of Ada's with Bob as `role`. */
async function acmeWithBobAs(role: 'viewer' | 'operator' | 'admin') {
  const org = await core.useCases.orgs.create(ada, { name: 'acme' });
  const member = await core.useCases.orgs.addMember(ada, org.id, { email: bob.email, role });
  await core.useCases.invitations.accept(bob, member.id);
  return org;
}

async function publish(version = '1.0.0', shasums = SHASUMS, key = signer.privateKey) {
  return core.useCases.registryProviders.publish(bob, 'acme', 'null', version, {
    protocols: ['5.0'],
    shasums,
    shasums_signature: await signatureOf(shasums, key),
  });
}

beforeAll(async () => {
  signer = await newKey('releases');
  stranger = await newKey('stranger');
});

beforeEach(async () => {
  core = createTestCore();
  ada = await seedUser(core, { email: 'ada@example.test' });
  bob = await seedUser(core, { email: 'bob@example.test' });
});

describe('SHA256SUMS', () => {
  it('reads sha256sum and goreleaser lines, and refuses anything else', () => {
    expect([...parseShasums(SHASUMS).keys()]).toHaveLength(3);
    expect(() => parseShasums('not a line\n')).toThrow(UnprocessableError);
    expect(() => parseShasums('\n')).toThrow(UnprocessableError);
  });
});

describe('the provider registry (issue 28)', () => {
  it("publishes a version signed by one of the namespace's keys, checks each zip against SHA256SUMS, audited", async () => {
    const org = await acmeWithBobAs('operator');
    const key = await core.useCases.gpgKeys.add(ada, 'acme', signer.publicKey);
    expect(key.key_id).toBe(signer.keyId);

    const published = await publish();
    expect(published).toMatchObject({ version: '1.0.0', key_id: signer.keyId, protocols: ['5.0'] });
    expect(published.platforms.map((p) => [p.os, p.arch, p.uploaded])).toEqual([
      ['linux', 'amd64', false],
      ['darwin', 'arm64', false],
    ]);

    const uploaded = await core.useCases.registryProviders.uploadPlatform(
      bob,
      'acme',
      'null',
      '1.0.0',
      'linux',
      'amd64',
      chunksOf(ZIP, 500),
    );
    expect(uploaded.platforms.find((p) => p.os === 'linux')?.uploaded).toBe(true);

    // A zip whose bytes are not the ones SHA256SUMS lists is refused and not kept.
    await expectFailure(
      core.useCases.registryProviders.uploadPlatform(bob, 'acme', 'null', '1.0.0', 'darwin', 'arm64', chunksOf(ZIP)),
      UnprocessableError,
      'provider_shasum_mismatch',
    );
    // One SHA256SUMS does not list, and one already uploaded.
    await expectFailure(
      core.useCases.registryProviders.uploadPlatform(bob, 'acme', 'null', '1.0.0', 'windows', 'amd64', chunksOf(ZIP)),
      UnprocessableError,
      'provider_platform_not_listed',
    );
    await expectFailure(
      core.useCases.registryProviders.uploadPlatform(bob, 'acme', 'null', '1.0.0', 'linux', 'amd64', chunksOf(ZIP)),
      ConflictError,
      'provider_platform_exists',
    );

    const download = await core.useCases.registryProviders.download(bob, 'acme', 'null', '1.0.0', 'linux', 'amd64');
    expect(download.platform.shasum).toBe(ZIP_SHA);
    expect(download.keys.map((k) => k.key_id)).toEqual([signer.keyId]);
    const file = await core.useCases.registryProviders.openFile(download.owner_id, download.version.id, {
      kind: 'zip',
      os: 'linux',
      arch: 'amd64',
    });
    const chunks: Buffer[] = [];
    for await (const chunk of file.body as AsyncIterable<Uint8Array>) chunks.push(Buffer.from(chunk));
    expect(Buffer.concat(chunks)).toEqual(ZIP);
    await expectFailure(
      core.useCases.registryProviders.download(bob, 'acme', 'null', '1.0.0', 'darwin', 'arm64'),
      NotFoundError,
      'provider_platform_not_found',
    );

    const audit = await core.useCases.audit.list(ada, { org_id: org.id });
    expect(
      audit.items.map((entry) => entry.action).filter((a) => a.startsWith('provider') || a.startsWith('gpg')),
    ).toEqual(['provider_platform.upload', 'provider_version.publish', 'gpg_key.add']);
  });

  it('refuses a signature of another key, of other bytes, or when the namespace has no key; nothing is recorded', async () => {
    await acmeWithBobAs('operator');
    await expectFailure(publish(), UnprocessableError, 'provider_signature_invalid');
    await core.useCases.gpgKeys.add(ada, 'acme', signer.publicKey);
    await expectFailure(
      publish('1.0.0', SHASUMS, stranger.privateKey),
      UnprocessableError,
      'provider_signature_invalid',
    );
    const other = SHASUMS.replace(ZIP_SHA, 'f'.repeat(64));
    await expectFailure(
      core.useCases.registryProviders.publish(bob, 'acme', 'null', '1.0.0', {
        protocols: ['5.0'],
        shasums: SHASUMS,
        shasums_signature: await signatureOf(other, signer.privateKey),
      }),
      UnprocessableError,
      'provider_signature_invalid',
    );
    await expectFailure(
      core.useCases.registryProviders.versions(bob, 'acme', 'null'),
      NotFoundError,
      'provider_not_found',
    );
  });

  it('takes an armored signature and keeps it unarmored (what the CLI reads); a version never changes', async () => {
    await acmeWithBobAs('operator');
    await core.useCases.gpgKeys.add(ada, 'acme', signer.publicKey);
    await core.useCases.registryProviders.publish(bob, 'acme', 'null', '1.0.0', {
      protocols: ['5.0', '6.0'],
      shasums: SHASUMS,
      shasums_signature: await signatureOf(SHASUMS, signer.privateKey, true),
    });
    await expectFailure(publish(), ConflictError, 'provider_version_exists');
    const [version] = await core.useCases.registryProviders.versions(bob, 'acme', 'null');
    expect(version?.protocols).toEqual(['5.0', '6.0']);
    const download = await core.useCases.registryProviders.uploadPlatform(
      bob,
      'acme',
      'null',
      '1.0.0',
      'linux',
      'amd64',
      chunksOf(ZIP),
    );
    expect(download.version).toBe('1.0.0');
    const found = await core.useCases.registryProviders.download(bob, 'acme', 'null', '1.0.0', 'linux', 'amd64');
    const signature = await core.useCases.registryProviders.openFile(found.owner_id, found.version.id, {
      kind: 'signature',
    });
    const parsed = await openpgp.readSignature({ binarySignature: signature.body as Uint8Array });
    expect(parsed.getSigningKeyIDs()[0]?.toHex().toUpperCase()).toBe(signer.keyId);
  });

  it('checks the names and the size limit, streaming', async () => {
    core = createTestCore({ settings: { registry: { ...DEFAULT_REGISTRY_SETTINGS, providerMaxBytes: 1024 } } });
    ada = await seedUser(core, { email: 'ada@example.test' });
    bob = await seedUser(core, { email: 'bob@example.test' });
    await acmeWithBobAs('operator');
    await core.useCases.gpgKeys.add(ada, 'acme', signer.publicKey);
    await expectFailure(publish('v1'), ValidationError);
    await expectFailure(
      core.useCases.registryProviders.publish(bob, 'acme', 'Null!', '1.0.0', {
        protocols: ['5.0'],
        shasums: SHASUMS,
        shasums_signature: 'AAAA',
      }),
      ValidationError,
    );
    await publish();
    await expectFailure(
      core.useCases.registryProviders.uploadPlatform(bob, 'acme', 'null', '1.0.0', 'linux', 'amd64', chunksOf(ZIP)),
      TooLargeError,
      'provider_zip_too_large',
    );
  });

  it('reading needs viewer, publishing operator, keys and deletion admin; outsiders see no namespace', async () => {
    await acmeWithBobAs('viewer');
    await core.useCases.gpgKeys.add(ada, 'acme', signer.publicKey);
    await expectFailure(publish(), ForbiddenError, 'insufficient_role');
    await expectFailure(core.useCases.gpgKeys.add(bob, 'acme', stranger.publicKey), ForbiddenError);
    expect((await core.useCases.gpgKeys.list(bob, 'acme')).map((k) => k.key_id)).toEqual([signer.keyId]);
    const carol = await seedUser(core, { email: 'carol@example.test' });
    await expectFailure(core.useCases.gpgKeys.list(carol, 'acme'), NotFoundError, 'namespace_not_found');

    await core.useCases.registryProviders.publish(ada, 'acme', 'null', '1.0.0', {
      protocols: ['5.0'],
      shasums: SHASUMS,
      shasums_signature: await signatureOf(SHASUMS, signer.privateKey),
    });
    await expectFailure(core.useCases.registryProviders.deleteVersion(bob, 'acme', 'null', '1.0.0'), ForbiddenError);
    await expectFailure(core.useCases.gpgKeys.delete(bob, 'acme', signer.keyId), ForbiddenError);
    await core.useCases.registryProviders.deleteVersion(ada, 'acme', 'null', '1.0.0');
    expect(await core.useCases.registryProviders.versions(bob, 'acme', 'null')).toEqual([]);
    await core.useCases.gpgKeys.delete(ada, 'acme', signer.keyId.toLowerCase());
    await expectFailure(core.useCases.gpgKeys.delete(ada, 'acme', signer.keyId), NotFoundError, 'gpg_key_not_found');
  });

  it("an organization's provider zips and keys go with it; a deleted version's zips go with the version", async () => {
    const org = await acmeWithBobAs('operator');
    await core.useCases.gpgKeys.add(ada, 'acme', signer.publicKey);
    const zips = () => core.artifacts.keys().filter((key) => key.startsWith('registry/providers/'));
    for (const version of ['1.0.0', '2.0.0']) {
      const shasums = SHASUMS.replaceAll('1.0.0', version);
      await publish(version, shasums);
      await core.useCases.registryProviders.uploadPlatform(
        bob,
        'acme',
        'null',
        version,
        'linux',
        'amd64',
        chunksOf(ZIP),
      );
    }
    expect(zips()).toHaveLength(2);
    await core.useCases.registryProviders.deleteVersion(ada, 'acme', 'null', '2.0.0');
    expect(zips()).toHaveLength(1);
    await core.useCases.orgs.delete(ada, org.id);
    expect(zips()).toEqual([]);
    const state = core.uow.snapshot();
    expect([state.registryProviders.size, state.registryProviderVersions.size, state.registryGpgKeys.size]).toEqual([
      0, 0, 0,
    ]);
  });

  it('reads one armored public key, and refuses a private key or anything else', async () => {
    await acmeWithBobAs('admin');
    await expectFailure(core.useCases.gpgKeys.add(bob, 'acme', 'hello'), ValidationError, 'gpg_key_invalid');
    const armoredPrivate = signer.privateKey.armor();
    await expectFailure(core.useCases.gpgKeys.add(bob, 'acme', armoredPrivate), ValidationError, 'gpg_key_invalid');
    await core.useCases.gpgKeys.add(bob, 'acme', signer.publicKey);
    await expectFailure(core.useCases.gpgKeys.add(bob, 'acme', signer.publicKey), ConflictError, 'gpg_key_exists');
  });
});
