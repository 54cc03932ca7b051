import { ConflictError, DEFAULT_WORKSPACE_SETTINGS, isUuid, NotFoundError, ValidationError } from '@trellis/core';
import {
  createTestCore,
  seedUser,
  seedVine,
  seedVineyard,
  type TestCore,
  type TestUser,
} from '@trellis/testkit/memory';
import { beforeEach, describe, expect, it } from 'vitest';
import { expectFailure, UNKNOWN_ID } from './helpers.js';

/** The external id of an assumed-role identity (undefined for any other kind). */
const externalIdOf = (identity: { kind: string; external_id?: string } | null | undefined) =>
  identity?.kind === 'assume_role' ? identity.external_id : undefined;

let core: TestCore;
let ada: TestUser;
let vineyardId: string;
const ROLE = 'arn:aws:iam::123456789012:role/trellis-deployer';
const inline = { type: 'inline', files: { 'main.tf': 'terraform {}' } };

beforeEach(async () => {
  core = createTestCore();
  ada = await seedUser(core);
  vineyardId = (await seedVineyard(core, ada, 'prod')).id;
});

const create = (input: Record<string, unknown>) =>
  core.useCases.vines.create(ada, { name: 'web', vineyard_id: vineyardId, source: inline, ...input });

describe('creating a configuration', () => {
  it('creates a NEW vine with defaults: project name = name, tofu, no variables, no identity', async () => {
    const vine = await create({});
    expect(vine).toEqual({
      id: expect.any(String),
      owner_id: ada.userId,
      vineyard_id: vineyardId,
      name: 'web',
      project_name: 'web',
      cloud_identity_id: null,
      source: { type: 'inline', files: { 'main.tf': 'terraform {}' } },
      variables: {},
      engine: { name: 'tofu', version: null },
      status: 'NEW',
      status_message: null,
      drift_detection: null,
      next_drift_check_at: null,
      drift: null,
      triggers: { after: [] },
      approval: null,
      tags: [],
      terraform_version: 'latest',
      execution_mode: 'remote',
      workspace_settings: DEFAULT_WORKSPACE_SETTINGS,
      created_at: core.clock.now().toISOString(),
      updated_at: core.clock.now().toISOString(),
      cloud_identity: null,
      components: { cluster: null, argocd: null, outputs: null },
    });
    expect(isUuid(vine.id)).toBe(true);
  });

  it('takes a git source with ref and path, and an engine by name or object', async () => {
    const vine = await create({
      source: { type: 'git', url: 'https://git.example.test/infra.git', ref: 'main', path: 'stacks/web' },
      engine: { name: 'terraform', version: '1.9.5' },
    });
    expect(vine.source).toEqual({
      type: 'git',
      url: 'https://git.example.test/infra.git',
      ref: 'main',
      path: 'stacks/web',
    });
    expect(vine.engine).toEqual({ name: 'terraform', version: '1.9.5' });
    const other = await create({
      name: 'web2',
      source: { type: 'git', url: 'git@example.test:infra.git' },
      engine: 'terraform',
    });
    expect(other.source).toEqual({ type: 'git', url: 'git@example.test:infra.git', ref: null, path: null });
    expect(other.engine).toEqual({ name: 'terraform', version: null });
  });

  it('accepts variables as plain strings or as {value, sensitive}', async () => {
    const vine = await create({
      variables: { region: 'eu-west-1', size: { value: 'large' }, db_password: { value: 'hunter2', sensitive: true } },
    });
    expect(vine.variables).toEqual({
      region: { value: 'eu-west-1', sensitive: false },
      size: { value: 'large', sensitive: false },
      db_password: { value: '***', sensitive: true },
    });
    const stored = core.uow.snapshot().vines.get(vine.id)!;
    expect(stored.variables.db_password).toEqual({ value: 'hunter2', sensitive: true });
  });

  it('never shows a sensitive value to people: create, get, list and vineyard views', async () => {
    const vine = await create({ variables: { secret: { value: 'hunter2', sensitive: true } } });
    const views = [
      vine,
      await core.useCases.vines.get(ada, vine.id),
      await core.useCases.vines.get(ada, 'web'),
      await core.useCases.vines.getByProjectName(ada, 'web'),
      (await core.useCases.vines.list(ada)).items,
      (await core.useCases.vineyards.list(ada)).items,
      await core.useCases.vineyards.get(ada, vineyardId),
    ];
    for (const view of views) expect(JSON.stringify(view)).not.toContain('hunter2');
  });

  it('reports every invalid field at once, with its path', async () => {
    const error = await expectFailure(
      core.useCases.vines.create(ada, {
        name: 'bad name',
        vineyard_id: 'nope',
        project_name: '../etc',
        source: { type: 'svn' },
        variables: { '1bad': 'x' },
        engine: { name: 'pulumi' },
        cloud_identity: { role_arn: 'not-an-arn' },
      }),
      ValidationError,
      'validation_failed',
    );
    expect(error.fields.map((field) => field.path).sort()).toEqual(
      [
        'cloud_identity.role_arn',
        'engine.name',
        'name',
        'project_name',
        'source.type',
        'variables.1bad',
        'vineyard_id',
      ].sort(),
    );
    expect(core.uow.snapshot().vines.size).toBe(0);
  });

  it.each([
    [{ source: undefined }, 'source'],
    [{ source: 'main.tf' }, 'source'],
    [{ source: { type: 'git' } }, 'source.url'],
    [{ source: { type: 'git', url: '  ' } }, 'source.url'],
    [{ source: { type: 'git', url: 'https://x.test/r.git', ref: '' } }, 'source.ref'],
    [{ source: { type: 'git', url: 'https://x.test/r.git', path: '../up' } }, 'source.path'],
    [{ source: { type: 'git', url: 'https://x.test/r.git', path: '/abs' } }, 'source.path'],
    [{ source: { type: 'git', url: 'https://x.test/r.git', path: 'a\\b' } }, 'source.path'],
    [{ source: { type: 'git', url: 'https://x.test/r.git', ref: '--upload-pack=touch /tmp/x' } }, 'source.ref'],
    [{ source: { type: 'git', url: '--upload-pack=touch /tmp/x' } }, 'source.url'],
    [{ source: { type: 'git', url: 'https://x.test/r.git', path: '-p' } }, 'source.path'],
    [{ source: { type: 'git', url: 'https://user:secret@x.test/r.git' } }, 'source.url'],
    [{ source: { type: 'inline', files: {} } }, 'source.files'],
    [{ source: { type: 'inline' } }, 'source.files'],
    [{ source: { type: 'inline', files: { '../main.tf': '' } } }, 'source.files.../main.tf'],
    [{ source: { type: 'inline', files: { 'a/./b.tf': '' } } }, 'source.files.a/./b.tf'],
    [{ source: { type: 'inline', files: { 'main.tf': 42 } } }, 'source.files.main.tf'],
    [{ source: { type: 'inline', files: { 'big.tf': 'x'.repeat(5 * 1024 * 1024 + 1) } } }, 'source.files'],
    [{ variables: ['a'] }, 'variables'],
    [{ variables: { ok: 42 } }, 'variables.ok'],
    [{ variables: { ok: { value: 'v', sensitive: 'yes' } } }, 'variables.ok.sensitive'],
    [{ engine: { name: 'tofu', version: 'not a version!' } }, 'engine.version'],
    [{ cloud_identity_id: 'nope' }, 'cloud_identity_id'],
    [{ cloud_identity_id: UNKNOWN_ID, cloud_identity: { role_arn: ROLE } }, 'cloud_identity'],
    [{ cloud_identity: 'arn' }, 'cloud_identity'],
    [{ cloud_identity: { provider: 'gcp', role_arn: ROLE } }, 'cloud_identity.provider'],
    [{ cloud_identity: { role_arn: ROLE, external_id: 'x' } }, 'cloud_identity.external_id'],
    [{ name: undefined }, 'name'],
  ])('refuses %j at %s', async (input, path) => {
    const error = await expectFailure(create(input), ValidationError);
    expect(error.fields.map((field) => field.path)).toContain(path);
  });

  it('accepts an inline source of exactly 5 MiB', async () => {
    const vine = await create({ source: { type: 'inline', files: { 'big.tf': 'x'.repeat(5 * 1024 * 1024) } } });
    expect(vine.source.type).toBe('inline');
  });

  it('creates an inline cloud identity with a generated external id', async () => {
    const vine = await create({ cloud_identity: { provider: 'aws', role_arn: ROLE } });
    expect(vine.cloud_identity).toEqual({
      id: vine.cloud_identity_id,
      owner_id: ada.userId,
      kind: 'assume_role',
      provider: 'aws',
      role_arn: ROLE,
      external_id: expect.any(String),
    });
    expect(isUuid(externalIdOf(vine.cloud_identity as never))).toBe(true);
    const again = await create({ name: 'web2', cloud_identity: { role_arn: ROLE } });
    expect(externalIdOf(again.cloud_identity as never)).not.toBe(externalIdOf(vine.cloud_identity as never));
  });

  it('keeps a given external id, lower-cased', async () => {
    const externalId = 'AAAAAAAA-BBBB-4CCC-8DDD-EEEEEEEEEEEE';
    const vine = await create({ cloud_identity: { role_arn: ROLE, external_id: externalId } });
    expect(externalIdOf(vine.cloud_identity as never)).toBe(externalId.toLowerCase());
  });

  it('links an existing cloud identity by id', async () => {
    const first = await create({ cloud_identity: { role_arn: ROLE } });
    const second = await create({ name: 'web2', cloud_identity_id: first.cloud_identity_id!.toUpperCase() });
    expect(second.cloud_identity_id).toBe(first.cloud_identity_id);
    expect(second.cloud_identity).toEqual(first.cloud_identity);
    expect(core.uow.snapshot().cloudIdentities.size).toBe(1);
  });

  it('404s an unknown cloud identity, or one of another owner', async () => {
    await expectFailure(create({ cloud_identity_id: UNKNOWN_ID }), NotFoundError, 'cloud_identity_not_found');
    const bob = await seedUser(core);
    const theirs = await seedVine(core, bob, { cloud_identity: { role_arn: ROLE } });
    await expectFailure(
      create({ cloud_identity_id: theirs.cloud_identity_id }),
      NotFoundError,
      'cloud_identity_not_found',
    );
  });

  it('404s an unknown vineyard, or one of another owner', async () => {
    await expectFailure(create({ vineyard_id: UNKNOWN_ID }), NotFoundError, 'vineyard_not_found');
    const bob = await seedUser(core);
    const theirs = await seedVineyard(core, bob);
    await expectFailure(create({ vineyard_id: theirs.id }), NotFoundError, 'vineyard_not_found');
    expect(core.uow.snapshot().vines.size).toBe(0);
  });

  it('refuses a taken name or project name per owner, and commits nothing of the attempt', async () => {
    await create({ project_name: 'web-project' });
    await expectFailure(create({ project_name: 'other' }), ConflictError, 'vine_name_taken');
    await expectFailure(create({ name: 'web2', project_name: 'web-project' }), ConflictError, 'project_name_taken');
    await expectFailure(create({ cloud_identity: { role_arn: ROLE } }), ConflictError, 'vine_name_taken');
    expect(core.uow.snapshot().cloudIdentities.size).toBe(0);
    const bob = await seedUser(core);
    const bobsVineyard = await seedVineyard(core, bob);
    await expect(
      core.useCases.vines.create(bob, {
        name: 'web',
        project_name: 'web-project',
        vineyard_id: bobsVineyard.id,
        source: inline,
      }),
    ).resolves.toMatchObject({ name: 'web' });
  });
});

describe('reading configurations', () => {
  it('finds a vine by name, by id (any case) and by project name', async () => {
    const vine = await create({ project_name: 'web-prod' });
    expect((await core.useCases.vines.get(ada, 'web')).id).toBe(vine.id);
    expect((await core.useCases.vines.get(ada, vine.id)).id).toBe(vine.id);
    expect((await core.useCases.vines.get(ada, vine.id.toUpperCase())).id).toBe(vine.id);
    expect((await core.useCases.vines.getByProjectName(ada, 'web-prod')).id).toBe(vine.id);
    await expectFailure(core.useCases.vines.getByProjectName(ada, 'web'), NotFoundError);
  });

  it('finds a vine whose name looks like a UUID by that name', async () => {
    const name = '12345678-1234-4234-8234-123456789012';
    const vine = await create({ name, project_name: 'p' });
    expect((await core.useCases.vines.get(ada, name)).id).toBe(vine.id);
  });

  it('returns the vine with its cloud identity and components', async () => {
    const vine = await create({ cloud_identity: { role_arn: ROLE } });
    const view = await core.useCases.vines.get(ada, 'web');
    expect((view.cloud_identity as { role_arn?: string } | null)?.role_arn).toBe(ROLE);
    expect(view.components).toEqual({ cluster: null, argocd: null, outputs: null });
    expect(view.id).toBe(vine.id);
  });

  it('lists the owner’s vines newest first, as summaries without files or variables', async () => {
    await create({ name: 'zeta' });
    core.clock.advance(1000);
    await create({ name: 'alpha' });
    const listed = (await core.useCases.vines.list(ada)).items;
    expect(listed.map((v) => v.name)).toEqual(['alpha', 'zeta']);
    expect(listed[0]).not.toHaveProperty('variables');
  });

  it('404s unknown names and other owners’ vines, by every address', async () => {
    const bob = await seedUser(core);
    const theirs = await seedVine(core, bob, { name: 'bobs', project_name: 'bobs-project' });
    await expectFailure(core.useCases.vines.get(ada, 'bobs'), NotFoundError, 'configuration_not_found');
    await expectFailure(core.useCases.vines.get(ada, theirs.id), NotFoundError, 'configuration_not_found');
    await expectFailure(core.useCases.vines.getByProjectName(ada, 'bobs-project'), NotFoundError);
    await expectFailure(core.useCases.vines.get(ada, ''), NotFoundError);
    await expectFailure(core.useCases.vines.get(ada, 42), NotFoundError);
    await expectFailure(core.useCases.vines.getByProjectName(ada, '../x'), ValidationError);
    expect((await core.useCases.vines.list(ada)).items).toEqual([]);
  });
});
