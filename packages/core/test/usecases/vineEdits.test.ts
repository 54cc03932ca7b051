/**
 * Changing and deleting vines and vineyards (issue 25) over the memory fakes: who may, what a
 * change of variables and cloud identity does, and that each rule of creation applies.
 */
import { ConflictError, InsufficientRoleError, NotFoundError, systemScope, ValidationError } from '@trellis/core';
import {
  addAcceptedMember,
  createTestCore,
  newVcsConnection,
  seedUser,
  seedVineyard,
  type TestCore,
  type TestUser,
} from '@trellis/testkit/memory';
import { beforeEach, describe, expect, it } from 'vitest';
import { expectFailure } from './helpers.js';

const ROLE = 'arn:aws:iam::123456789012:role/trellis-deployer';
const inline = { type: 'inline', files: { 'main.tf': 'terraform {}' } };

let core: TestCore;
let ada: TestUser;
let vineyardId: string;

beforeEach(async () => {
  core = createTestCore();
  ada = await seedUser(core);
  vineyardId = (await seedVineyard(core, ada, 'prod')).id;
});

const create = (input: Record<string, unknown> = {}) =>
  core.useCases.vines.create(ada, { name: 'web', vineyard_id: vineyardId, source: inline, ...input });

describe('changing a configuration', () => {
  it('changes variables one by one; a plain value given for a sensitive variable stays sensitive', async () => {
    await create({ variables: { region: 'eu', token: { value: 'old', sensitive: true }, legacy: '1' } });
    await core.useCases.vineEdits.update(ada, 'web', {
      variables: { token: 'new', legacy: null, added: { value: 'x', sensitive: true } },
    });
    const vine = await core.deps.uow.read(systemScope, (stores) => stores.vines.findByName(ada.userId, 'web'));
    expect(vine?.variables).toEqual({
      region: { value: 'eu', sensitive: false },
      token: { value: 'new', sensitive: true },
      added: { value: 'x', sensitive: true },
    });
    // Made plain on purpose.
    const plain = await core.useCases.vineEdits.update(ada, 'web', {
      variables: { token: { value: 'p', sensitive: false } },
    });
    expect(plain.variables.token).toEqual({ value: 'p', sensitive: false });
  });

  it('keeps the description of a variable whose value changes', async () => {
    const vine = await create({ variables: { region: 'eu' } });
    await core.deps.uow.run(systemScope, (stores) =>
      stores.vines.updateSettings(
        ada.userId,
        vine.id,
        { variables: { region: { value: 'eu', sensitive: false, description: 'where it runs' } } },
        core.clock.now().toISOString(),
      ),
    );
    const updated = await core.useCases.vineEdits.update(ada, 'web', { variables: { region: 'us' } });
    expect(updated.variables.region).toEqual({ value: 'us', sensitive: false, description: 'where it runs' });
  });

  it('checks every field as at creation and reports them all at once; nothing changes', async () => {
    await create();
    const error = await expectFailure(
      core.useCases.vineEdits.update(ada, 'web', {
        name: 'Bad Name!',
        source: { type: 'inline', files: { '../escape.tf': '' } },
        variables: { 'not valid': 'x' },
        engine: { name: 'pulumi' },
      }),
      ValidationError,
      'validation_failed',
    );
    expect(error.fields.map((field) => field.path).sort()).toEqual([
      'engine.name',
      'name',
      'source.files.../escape.tf',
      'variables.not valid',
    ]);
    expect((await core.useCases.vines.get(ada, 'web')).source).toEqual(inline);
  });

  it('sets, replaces and removes the cloud identity', async () => {
    const vine = await create();
    const withRole = await core.useCases.vineEdits.update(ada, vine.id, { cloud_identity: { role_arn: ROLE } });
    expect(withRole.cloud_identity).toMatchObject({ kind: 'assume_role', role_arn: ROLE });
    const again = await core.useCases.vineEdits.update(ada, vine.id, {
      cloud_identity_id: withRole.cloud_identity?.id,
    });
    expect(again.cloud_identity_id).toBe(withRole.cloud_identity?.id);
    await expectFailure(
      core.useCases.vineEdits.update(ada, vine.id, { cloud_identity_id: '9f9f9f9f-9f9f-4f9f-8f9f-9f9f9f9f9f9f' }),
      NotFoundError,
      'cloud_identity_not_found',
    );
    const none = await core.useCases.vineEdits.update(ada, vine.id, { cloud_identity_id: null });
    expect(none).toMatchObject({ cloud_identity_id: null, cloud_identity: null });
  });

  it('switches the execution mode, audits it, keeps the config hash, and refuses any other value by name', async () => {
    const vine = await create();
    expect(vine.execution_mode).toBe('remote');
    const local = await core.useCases.vineEdits.update(ada, 'web', { execution_mode: 'local' });
    expect(local.execution_mode).toBe('local');
    expect((await core.useCases.vines.get(ada, vine.id)).execution_mode).toBe('local');
    const entries = [...core.uow.snapshot().audit.values()].filter(
      (entry) => entry.action === 'vine.update' && entry.target.id === vine.id,
    );
    expect(entries.map((entry) => entry.details)).toEqual([
      {
        name: 'web',
        changed: 'execution_mode',
        execution_mode: 'local',
        previous_execution_mode: 'remote',
        config_hash_changed: false,
      },
    ]);

    const error = await expectFailure(
      core.useCases.vineEdits.update(ada, 'web', { execution_mode: 'agent-pool' }),
      ValidationError,
      'validation_failed',
    );
    expect(error.fields).toEqual([{ path: 'execution_mode', message: 'must be remote or local, not "agent-pool"' }]);
    expect((await core.useCases.vines.get(ada, vine.id)).execution_mode).toBe('local');
    const back = await core.useCases.vineEdits.update(ada, vine.id, { execution_mode: 'remote' });
    expect(back.execution_mode).toBe('remote');
  });

  it('refuses a name or project name the owner already has', async () => {
    await create();
    await create({ name: 'api' });
    await expectFailure(core.useCases.vineEdits.update(ada, 'api', { name: 'web' }), ConflictError, 'vine_name_taken');
    await expectFailure(
      core.useCases.vineEdits.update(ada, 'api', { project_name: 'web' }),
      ConflictError,
      'project_name_taken',
    );
  });
});

describe('in an organization', () => {
  it('admins change and delete (with force); operators and viewers may not', async () => {
    const bo = await seedUser(core, { email: 'bo@example.com' });
    const org = await core.useCases.orgs.create(ada, { name: 'acme' });
    await addAcceptedMember(core.useCases, ada, org.id, bo, 'operator');
    const yard = await core.useCases.vineyards.create(ada, { name: 'shared', org_id: org.id });
    const vine = await core.useCases.vines.create(ada, { name: 'shared-web', vineyard_id: yard.id, source: inline });
    await expectFailure(
      core.useCases.vineEdits.update(bo, vine.id, { variables: { a: '1' } }),
      InsufficientRoleError,
      'insufficient_role',
    );
    await expectFailure(core.useCases.vineEdits.delete(bo, vine.id, { force: true }), InsufficientRoleError);
    await expectFailure(core.useCases.vineEdits.updateVineyard(bo, yard.id, { name: 'x' }), InsufficientRoleError);
    await expectFailure(core.useCases.vineEdits.deleteVineyard(bo, yard.id), InsufficientRoleError);

    await core.useCases.vineEdits.update(ada, vine.id, { variables: { a: '1' } });
    const deleted = await core.useCases.vineEdits.delete(ada, vine.id, { force: 'true' });
    expect(deleted.name).toBe('shared-web');
    await core.useCases.vineEdits.deleteVineyard(ada, yard.id);
    await expectFailure(core.useCases.vineyards.get(ada, yard.id), NotFoundError, 'vineyard_not_found');
  });
});

describe('deleting', () => {
  it('refuses a DEPLOYED configuration without force, and a force that is not a boolean', async () => {
    const vine = await create();
    await core.deps.uow.run(systemScope, (stores) =>
      stores.vines.updateStatus(ada.userId, vine.id, 'DEPLOYED', null, core.clock.now().toISOString()),
    );
    const refused = await expectFailure(
      core.useCases.vineEdits.delete(ada, 'web'),
      ConflictError,
      'vine_has_resources',
    );
    expect(refused.message).toBe(
      'configuration web still manages what it deployed: destroy it first (trellis destroy web), or delete it with force to leave them running unmanaged (organization admins and owners)',
    );
    await expectFailure(core.useCases.vineEdits.delete(ada, 'web', { force: 'yes' }), ValidationError);
    const deleted = await core.useCases.vineEdits.delete(ada, 'web', { force: true });
    expect(deleted.state_kept_until).toBe(new Date(core.clock.now().getTime() + 30 * 86_400_000).toISOString());
  });

  it('refuses a configuration connected to a repository until it is disconnected', async () => {
    const vine = await create();
    await core.deps.uow.run(systemScope, (stores) => stores.vcs.put(newVcsConnection(ada.userId, vine.id)));
    const refused = await expectFailure(
      core.useCases.vineEdits.delete(ada, 'web'),
      ConflictError,
      'configuration_connected',
    );
    expect(refused.message).toContain('disconnect it first (trellis configs disconnect web)');
    await core.deps.uow.run(systemScope, (stores) => stores.vcs.delete(ada.userId, vine.id));
    await core.useCases.vineEdits.delete(ada, 'web');
  });

  it('takes the deleted configuration out of the run triggers of those that ran after it', async () => {
    const network = await create({ name: 'network' });
    const dns = await create({ name: 'dns' });
    await create({ name: 'app' });
    await core.useCases.drift.configure(ada, 'app', { triggers: { after: [network.id, dns.id] } });
    await core.useCases.vineEdits.delete(ada, 'network');
    expect((await core.useCases.vines.get(ada, 'app')).triggers.after).toEqual([dns.id]);
  });
});
