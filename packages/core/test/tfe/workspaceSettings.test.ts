import {
  DEFAULT_WORKSPACE_SETTINGS,
  parseWorkspaceInput,
  type UserActor,
  ValidationError,
  workspaceSettingAttributes,
} from '@trellis/core';
import { createTestCore } from '@trellis/testkit/memory';
import { describe, expect, it } from 'vitest';
import { expectFailure, expectThrown } from '../usecases/helpers.js';

async function setup() {
  const core = createTestCore({ now: '2026-05-01T00:00:00.000Z' });
  const created = await core.useCases.auth.ensureUser({ email: 'alice@example.com' });
  const alice: UserActor = { userId: created.id, email: created.email };
  const org = await core.useCases.orgs.create(alice, { name: 'acme' });
  return { core, alice, org, workspaces: core.useCases.tfe.workspaces };
}

describe('workspace settings (the Terraform Cloud protocol)', () => {
  it('keeps what a create sets and an update changes, and only that', async () => {
    const { alice, workspaces } = await setup();
    const made = await workspaces.create(alice, 'acme', {
      name: 'network',
      settings: { description: 'the VPC', 'auto-apply': true, 'trigger-prefixes': ['/modules'] },
    });
    expect(made.vine.workspace_settings).toEqual({
      ...DEFAULT_WORKSPACE_SETTINGS,
      description: 'the VPC',
      auto_apply: true,
      trigger_prefixes: ['/modules'],
    });
    const updated = await workspaces.update(
      alice,
      { organization: 'acme', name: 'network' },
      {
        settings: {
          'working-directory': 'envs/prod',
          'queue-all-runs': true,
          'auto-destroy-at': '2027-01-01T00:00:00Z',
        },
      },
    );
    expect(updated.vine.workspace_settings).toMatchObject({
      description: 'the VPC',
      auto_apply: true,
      trigger_prefixes: ['/modules'],
      working_directory: 'envs/prod',
      queue_all_runs: true,
      auto_destroy_at: '2027-01-01T00:00:00.000Z',
    });
    const read = await workspaces.read(alice, { organization: 'acme', name: 'network' });
    expect(workspaceSettingAttributes(read.vine.workspace_settings)).toMatchObject({
      description: 'the VPC',
      'auto-apply': true,
      'working-directory': 'envs/prod',
      'trigger-prefixes': ['/modules'],
      'queue-all-runs': true,
    });
  });

  it('reads operations as the execution mode, but not beside execution-mode', async () => {
    const { alice, workspaces } = await setup();
    const made = await workspaces.create(alice, 'acme', { name: 'local-one', operations: false });
    expect(made.vine.execution_mode).toBe('local');
    await expectFailure(
      workspaces.update(
        alice,
        { organization: 'acme', name: 'local-one' },
        { operations: true, execution_mode: 'remote' },
      ),
      ValidationError,
    );
  });

  it.each([
    [{ 'working-directory': '../elsewhere' }, 'working-directory'],
    [{ 'working-directory': '/abs' }, 'working-directory'],
    [{ 'working-directory': 'a/../../b' }, 'working-directory'],
    [{ 'auto-apply': 'yes' }, 'auto-apply'],
    [{ description: 'x'.repeat(2001) }, 'description'],
    [{ 'trigger-prefixes': ['/a'], 'trigger-patterns': ['/b/**'] }, 'trigger-patterns'],
    [{ 'trigger-prefixes': [''] }, 'trigger-prefixes'],
    [{ 'auto-destroy-at': 'tomorrow' }, 'auto-destroy-at'],
  ])('refuses %j naming %s', (settings, attribute) => {
    const error = expectThrown(() => parseWorkspaceInput({ settings }), ValidationError);
    expect(error.message.startsWith(attribute)).toBe(true);
  });

  it.each(['1.12.6', 'latest', '~> 1.12', '>= 1.6, < 2', 'v1.9.0', '1.12.0-beta1'])('takes version %s', (version) => {
    expect(parseWorkspaceInput({ terraform_version: version }).terraform_version).toBe(version);
  });

  it.each(['nonexisting', 'x; rm -rf', '1'.repeat(65)])('refuses version %s', (version) => {
    expectThrown(() => parseWorkspaceInput({ terraform_version: version }), ValidationError);
  });
});
