import { createHash, randomBytes } from 'node:crypto';
import {
  compareSemVer,
  ownerScope,
  ConflictError,
  ForbiddenError,
  latestVersion,
  NotFoundError,
  personalNamespace,
  TooLargeError,
  UnprocessableError,
  ValidationError,
} from '@trellis/core';
import { chunksOf, createTestCore, seedUser, type TestCore, type TestUser, tarGz } from '@trellis/testkit/memory';
import { beforeEach, describe, expect, it } from 'vitest';
import { expectFailure } from '../usecases/helpers.js';

let core: TestCore;
let ada: TestUser;
let bob: TestUser;

const MODULE = tarGz([
  { path: 'main.tf', content: 'variable "cidr" {}\noutput "cidr" { value = var.cidr }\n' },
  { path: 'modules/', type: 'directory' },
  { path: 'modules/sub/main.tf', content: '' },
]);

async function readAll(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/** An organization `acme` of Ada's with Bob as `role`. */
async function acmeWithBobAs(role: 'viewer' | 'operator' | 'admin') {
  const org = await core.useCases.orgs.create(ada, { name: 'acme' });
  const member = await core.useCases.orgs.addMember(ada, org.id, { email: bob.email, role });
  await core.useCases.invitations.accept(bob, member.id);
  return { org, member };
}

const vpc = (version: string) => ({ namespace: 'acme', name: 'vpc', system: 'aws', version });

beforeEach(async () => {
  core = createTestCore();
  ada = await seedUser(core, { email: 'ada@example.test' });
  bob = await seedUser(core, { email: 'bob@example.test' });
});

describe('semantic versions of modules', () => {
  it('orders by precedence, pre-releases before their release, and picks the highest release as latest', () => {
    const sorted = ['1.10.0', '1.2.0', '1.2.0-rc.1', '1.2.0-beta.11', '1.2.0-beta.2', '0.9.0'].sort(compareSemVer);
    expect(sorted).toEqual(['0.9.0', '1.2.0-beta.2', '1.2.0-beta.11', '1.2.0-rc.1', '1.2.0', '1.10.0']);
    expect(latestVersion(['1.0.0', '2.0.0-rc.1'])).toBe('1.0.0');
    expect(latestVersion(['2.0.0-rc.1', '2.0.0-beta.1'])).toBe('2.0.0-rc.1');
    expect(latestVersion([])).toBe(null);
  });
});

describe('the module registry (issue 28)', () => {
  it('publishes a version streamed from a tarball, lists it, and serves the same bytes, audited', async () => {
    const { org } = await acmeWithBobAs('operator');
    const published = await core.useCases.registryModules.publish(bob, vpc('1.2.0'), chunksOf(MODULE, 100));
    expect(published).toMatchObject({
      namespace: 'acme',
      name: 'vpc',
      system: 'aws',
      version: '1.2.0',
      size: MODULE.length,
      sha256: createHash('sha256').update(MODULE).digest('hex'),
      deprecated: false,
      published_by: bob.userId,
    });
    await core.useCases.registryModules.publish(bob, vpc('1.10.0'), chunksOf(MODULE));
    await core.useCases.registryModules.publish(bob, { ...vpc('0.1.0'), name: 'DNS' }, chunksOf(MODULE));

    const page = await core.useCases.registryModules.list(ada, { namespace: 'ACME', limit: 1 });
    expect(page.items.map((module) => [module.name, module.latest_version])).toEqual([['dns', '0.1.0']]);
    expect(page.next_cursor).not.toBe(null);
    const rest = await core.useCases.registryModules.list(ada, { namespace: 'acme', cursor: page.next_cursor });
    expect(rest.items.map((module) => [module.name, module.latest_version])).toEqual([['vpc', '1.10.0']]);

    const { versions } = await core.useCases.registryModules.versions(bob, vpc('x'));
    expect(versions.map((version) => version.version)).toEqual(['1.10.0', '1.2.0']);

    const download = await core.useCases.registryModules.download(bob, vpc('1.2.0'));
    const tarball = await core.useCases.registryModules.openTarball(download.ownerId, download.versionId);
    expect(await readAll(tarball.body)).toEqual(MODULE);

    const audit = await core.useCases.audit.list(ada, { org_id: org.id });
    const entries = audit.items.filter((entry) => entry.action.startsWith('module'));
    expect(entries.map((entry) => [entry.action, entry.details.version])).toEqual([
      ['module_version.publish', '0.1.0'],
      ['module_version.publish', '1.10.0'],
      ['module_version.publish', '1.2.0'],
    ]);
  });

  it('never changes a published version: publishing it again is 409 module_version_exists, nothing stored', async () => {
    await acmeWithBobAs('operator');
    const first = await core.useCases.registryModules.publish(bob, vpc('1.0.0'), chunksOf(MODULE));
    const other = tarGz([{ path: 'main.tf', content: '# changed\n' }]);
    await expectFailure(
      core.useCases.registryModules.publish(ada, vpc('1.0.0'), chunksOf(other)),
      ConflictError,
      'module_version_exists',
    );
    const { versions } = await core.useCases.registryModules.versions(ada, vpc('x'));
    expect(versions).toEqual([first]);
    const download = await core.useCases.registryModules.download(ada, vpc('1.0.0'));
    expect(download.versionId).toBe(first.id);
    const tarball = await core.useCases.registryModules.openTarball(download.ownerId, download.versionId);
    expect(await readAll(tarball.body)).toEqual(MODULE);
  });

  it('refuses what is not a module tarball, or too large, or not semver, keeping nothing', async () => {
    core = createTestCore({ settings: { registry: { moduleMaxBytes: 2048 } } });
    ada = await seedUser(core, { email: 'ada@example.test' });
    const mine = { namespace: personalNamespace(ada.userId), name: 'vpc', system: 'aws' };
    await expectFailure(
      core.useCases.registryModules.publish(ada, { ...mine, version: '1.0.0' }, chunksOf(Buffer.from('not gzip'))),
      UnprocessableError,
      'module_invalid',
    );
    await expectFailure(
      core.useCases.registryModules.publish(
        ada,
        { ...mine, version: '1.0.0' },
        chunksOf(tarGz([{ path: '../escape.tf', content: '' }])),
      ),
      UnprocessableError,
      'module_invalid',
    );
    await expectFailure(
      core.useCases.registryModules.publish(
        ada,
        { ...mine, version: '1.0.0' },
        chunksOf(tarGz([{ path: 'link', type: 'symlink', linkpath: '../../etc/passwd' }])),
      ),
      UnprocessableError,
      'module_invalid',
    );
    const big = tarGz([{ path: 'big.tf', content: randomBytes(8000) }]);
    await expectFailure(
      core.useCases.registryModules.publish(ada, { ...mine, version: '1.0.0' }, chunksOf(big)),
      TooLargeError,
      'module_too_large',
    );
    await expectFailure(
      core.useCases.registryModules.publish(ada, { ...mine, version: '1.0.0' }, chunksOf(MODULE), 4096),
      TooLargeError,
      'module_too_large',
    );
    for (const version of ['v1.0.0', '1.0', '1.0.0+build.1', '01.0.0']) {
      await expectFailure(
        core.useCases.registryModules.publish(ada, { ...mine, version }, chunksOf(MODULE)),
        ValidationError,
        'validation_failed',
      );
    }
    await expectFailure(
      core.useCases.registryModules.publish(ada, { ...mine, name: 'a/b', version: '1.0.0' }, chunksOf(MODULE)),
      ValidationError,
    );
    await expectFailure(core.useCases.registryModules.versions(ada, mine), NotFoundError, 'module_not_found');
    expect(core.artifacts.keys().filter((key) => key.startsWith('registry/'))).toEqual([]);
  });

  it('reads with viewer, publishes with operator, deprecates and deletes with admin; hides other namespaces', async () => {
    const { org, member } = await acmeWithBobAs('viewer');
    await core.useCases.registryModules.publish(ada, vpc('1.0.0'), chunksOf(MODULE));
    expect((await core.useCases.registryModules.versions(bob, vpc('x'))).versions).toHaveLength(1);
    await expectFailure(
      core.useCases.registryModules.publish(bob, vpc('1.1.0'), chunksOf(MODULE)),
      ForbiddenError,
      'insufficient_role',
    );
    await core.useCases.orgs.setMemberRole(ada, org.id, member.id, { role: 'operator' });
    await core.useCases.registryModules.publish(bob, vpc('1.1.0'), chunksOf(MODULE));
    await expectFailure(
      core.useCases.registryModules.deprecate(bob, vpc('1.0.0'), { reason: 'use 1.1' }),
      ForbiddenError,
      'insufficient_role',
    );
    await expectFailure(
      core.useCases.registryModules.deleteVersion(bob, vpc('1.0.0')),
      ForbiddenError,
      'insufficient_role',
    );

    const deprecated = await core.useCases.registryModules.deprecate(ada, vpc('1.0.0'), { reason: 'use 1.1' });
    expect(deprecated).toMatchObject({ deprecated: true, deprecation_reason: 'use 1.1' });
    expect(await core.useCases.registryModules.deprecate(ada, vpc('1.0.0'), { deprecated: false })).toMatchObject({
      deprecated: false,
      deprecation_reason: null,
    });
    await core.useCases.registryModules.deleteVersion(ada, vpc('1.1.0'));
    const after = await core.useCases.registryModules.versions(ada, vpc('x'));
    expect(after.versions.map((version) => version.version)).toEqual(['1.0.0']);
    expect(after.module.latest_version).toBe('1.0.0');
    await core.useCases.registryModules.deleteModule(ada, vpc('x'));
    await expectFailure(core.useCases.registryModules.versions(ada, vpc('x')), NotFoundError, 'module_not_found');
    expect(core.artifacts.keys().filter((key) => key.startsWith('registry/'))).toEqual([]);

    const cy = await seedUser(core, { email: 'cy@example.test' });
    await expectFailure(
      core.useCases.registryModules.list(cy, { namespace: 'acme' }),
      NotFoundError,
      'namespace_not_found',
    );
    await expectFailure(
      core.useCases.registryModules.list(cy, { namespace: personalNamespace(ada.userId) }),
      NotFoundError,
      'namespace_not_found',
    );
    const actions = (await core.useCases.audit.list(ada, { org_id: org.id })).items.map((entry) => entry.action);
    expect(actions.filter((action) => action.startsWith('module'))).toEqual([
      'module.delete',
      'module_version.delete',
      'module_version.undeprecate',
      'module_version.deprecate',
      'module_version.publish',
      'module_version.publish',
    ]);
  });

  it('goes with its organization: the records and the tarballs', async () => {
    const { org } = await acmeWithBobAs('operator');
    await core.useCases.registryModules.publish(bob, vpc('1.0.0'), chunksOf(MODULE));
    expect(core.artifacts.keys().filter((key) => key.startsWith('registry/'))).toHaveLength(1);
    await core.useCases.orgs.delete(ada, org.id);
    expect(core.artifacts.keys().filter((key) => key.startsWith('registry/'))).toEqual([]);
    await core.useCases.orgs.create(ada, { name: 'acme' });
    expect((await core.useCases.registryModules.list(ada, { namespace: 'acme' })).items).toEqual([]);
  });

  it('publishes for the owner itself (a Git tag), recorded and audited as the system', async () => {
    const { org } = await acmeWithBobAs('viewer');
    const namespace = { name: 'acme', ownerId: org.id, scope: ownerScope(org.id) };
    const published = await core.useCases.registryModules.publishIn(
      namespace,
      'system',
      { name: 'vpc', system: 'aws', version: '1.0.0' },
      chunksOf(MODULE),
    );
    expect(published).toMatchObject({ namespace: 'acme', version: '1.0.0', published_by: null });
    const [entry] = (await core.useCases.audit.list(ada, { org_id: org.id, action: 'module_version.publish' })).items;
    expect(entry?.actor).toEqual({ type: 'system', id: null });
    expect((await core.useCases.registryModules.versions(bob, vpc('x'))).versions).toEqual([published]);
  });
});
