import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addAcceptedMember, createTestCore, seedUser, type TestCore, type TestUser } from '@trellis/testkit/memory';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'trellis-mirror-usecases-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, 'terraform-provider-null_v3.2.4_x5'), 'a provider binary');
execFileSync('zip', ['-q', 'null.zip', 'terraform-provider-null_v3.2.4_x5'], { cwd: dir });
const ZIP = readFileSync(join(dir, 'null.zip'));
const ADDRESS = {
  hostname: 'registry.opentofu.org',
  namespace: 'hashicorp',
  type: 'null',
  version: '3.2.4',
  platform: 'linux_amd64',
};

async function* bytes(zip = ZIP): AsyncIterable<Uint8Array> {
  yield zip;
}

let core: TestCore;
let admin: TestUser;
let operator: TestUser;
let viewer: TestUser;
let orgId: string;

beforeEach(async () => {
  core = createTestCore();
  admin = await seedUser(core);
  operator = await seedUser(core);
  viewer = await seedUser(core);
  orgId = (await core.useCases.orgs.create(admin, { name: 'acme' })).id;
  await addAcceptedMember(core.useCases, admin, orgId, operator, 'operator');
  await addAcceptedMember(core.useCases, admin, orgId, viewer, 'viewer');
});

const artifactKeys = () => core.artifacts.keys().filter((key) => key.startsWith('registry/mirror/'));

describe("an organization's provider mirror", () => {
  it('takes pushes from operators, not viewers; deletes by admins only; audits both', async () => {
    await expect(core.useCases.mirror.push(viewer, 'acme', ADDRESS, bytes())).rejects.toMatchObject({
      code: 'insufficient_role',
    });
    expect(artifactKeys()).toEqual([]);
    const { archive, created } = await core.useCases.mirror.push(operator, 'ACME', ADDRESS, bytes());
    expect(created).toBe(true);
    expect(archive).toMatchObject({ provider: 'registry.opentofu.org/hashicorp/null', platform: 'linux_amd64' });
    expect((await core.useCases.mirror.list(viewer, 'acme', {})).items.map((a) => a.id)).toEqual([archive.id]);
    await expect(core.useCases.mirror.delete(operator, 'acme', archive.id)).rejects.toMatchObject({
      code: 'insufficient_role',
    });
    await core.useCases.mirror.delete(admin, 'acme', archive.id);
    expect((await core.useCases.mirror.list(viewer, 'acme', {})).items).toEqual([]);
    expect(artifactKeys()).toEqual([]);
    const audit = await core.useCases.audit.list(admin, { org_id: orgId });
    expect(audit.items.map((entry) => entry.action)).toEqual(
      expect.arrayContaining(['registry.mirror.push', 'registry.mirror.delete']),
    );
  });

  it('keeps one file per archive: the same bytes again change nothing, refused bytes leave nothing behind', async () => {
    await core.useCases.mirror.push(operator, 'acme', ADDRESS, bytes());
    const again = await core.useCases.mirror.push(operator, 'acme', ADDRESS, bytes());
    expect(again.created).toBe(false);
    await expect(
      core.useCases.mirror.push(operator, 'acme', ADDRESS, bytes(Buffer.concat([ZIP, Buffer.from('x')]))),
    ).rejects.toMatchObject({ code: 'mirror_archive_exists' });
    await expect(
      core.useCases.mirror.push(operator, 'acme', { ...ADDRESS, platform: 'darwin_arm64' }, bytes(Buffer.from('no'))),
    ).rejects.toMatchObject({ code: 'mirror_archive_invalid' });
    await expect(
      core.useCases.mirror.push(operator, 'acme', { ...ADDRESS, version: 'latest' }, bytes()),
    ).rejects.toMatchObject({ code: 'validation_failed' });
    expect(artifactKeys()).toHaveLength(1);
  });

  it('goes with its organization, files too', async () => {
    await core.useCases.mirror.push(operator, 'acme', ADDRESS, bytes());
    await core.useCases.orgs.delete(admin, orgId);
    expect(artifactKeys()).toEqual([]);
  });
});
