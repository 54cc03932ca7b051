import {
  InsufficientRoleError,
  NotFoundError,
  type PolicyCheck,
  type PolicyCompiler,
  UnprocessableError,
  type UserActor,
  ValidationError,
  TooLargeError,
} from '@trellis/core';
import {
  addAcceptedMember,
  bodyOf,
  createTestCore,
  seedVine,
  seedWorker,
  type TestCoreOptions,
} from '@trellis/testkit/memory';
import { describe, expect, it } from 'vitest';
import { expectFailure } from '../usecases/helpers.js';

const MODULE = 'package trellis.test\n\ndeny contains msg if {\n  input.x == 1\n  msg := "x is 1"\n}\n';

/** A compiler that answers what it is told, and records what it was asked. */
class ScriptedCompiler implements PolicyCompiler {
  readonly asked: string[] = [];
  constructor(private readonly answer: (module: string) => PolicyCheck) {}
  async check(module: string): Promise<PolicyCheck> {
    this.asked.push(module);
    return this.answer(module);
  }
}

async function setup(options: TestCoreOptions = {}) {
  const core = createTestCore({ now: '2026-05-01T00:00:00.000Z', ...options });
  const user = async (email: string): Promise<UserActor> => {
    const created = await core.useCases.auth.ensureUser({ email });
    return { userId: created.id, email: created.email };
  };
  return { core, alice: await user('alice@example.com'), bob: await user('bob@example.com') };
}

describe('policies', () => {
  it('are refused with the engine message when the module does not compile, or has no deny rule', async () => {
    const compiler = new ScriptedCompiler((module) =>
      module.includes('oops')
        ? { status: 'invalid', message: 'policy.rego:3: rego_parse_error: unexpected } token' }
        : module.includes('allow')
          ? { status: 'ok', package: 'x', rules: ['allow'] }
          : { status: 'ok', package: 'trellis.test', rules: ['deny'] },
    );
    const { core, alice } = await setup({ policyCompiler: compiler });
    const broken = await expectFailure(
      core.useCases.policies.create(alice, { name: 'b', enforcement: 'mandatory', module: 'package x\noops' }),
      UnprocessableError,
      'policy_invalid',
    );
    expect(broken.message).toContain('rego_parse_error: unexpected } token');
    await expectFailure(
      core.useCases.policies.create(alice, { name: 'a', enforcement: 'mandatory', module: 'package x\nallow := true' }),
      UnprocessableError,
      'policy_invalid',
    );
    await expectFailure(
      core.useCases.policies.create(alice, { name: 'c', enforcement: 'sometimes', module: MODULE }),
      ValidationError,
      'validation_failed',
    );
    await expectFailure(
      core.useCases.policies.create(alice, { name: 'c', enforcement: 'advisory', module: 'x'.repeat(64 * 1024 + 1) }),
      TooLargeError,
      'policy_too_large',
    );
    const created = await core.useCases.policies.create(alice, { name: 'ok', enforcement: 'advisory', module: MODULE });
    expect(created).toMatchObject({ name: 'ok', enforcement: 'advisory', version: 1, org_id: null, vineyard_id: null });
    expect(compiler.asked.at(-1)).toBe(MODULE);
  });

  it('without an engine, need a deny rule in the text and leave compiling to the agents', async () => {
    const { core, alice } = await setup();
    await expectFailure(
      core.useCases.policies.create(alice, {
        name: 'a',
        enforcement: 'mandatory',
        module: 'package x\nallow := true\n',
      }),
      UnprocessableError,
      'policy_invalid',
    );
    const created = await core.useCases.policies.create(alice, {
      name: 'unchecked',
      enforcement: 'mandatory',
      module: 'package x\n\ndeny contains msg if { msg := y }\n',
    });
    expect(created.version).toBe(1);
  });

  it('get a new version on every update, keep the old ones, and are audited', async () => {
    const { core, alice } = await setup();
    const created = await core.useCases.policies.create(alice, { name: 'p', enforcement: 'mandatory', module: MODULE });
    await expectFailure(core.useCases.policies.update(alice, created.id, {}), ValidationError, 'validation_failed');
    const second = await core.useCases.policies.update(alice, created.id, { enforcement: 'advisory' });
    expect(second).toMatchObject({ version: 2, enforcement: 'advisory', module: MODULE });
    const third = await core.useCases.policies.update(alice, created.id, { module: MODULE.replace('x is 1', 'one') });
    expect(third.version).toBe(3);
    const detail = await core.useCases.policies.get(alice, created.id);
    expect(detail.versions.map((v) => [v.version, v.enforcement])).toEqual([
      [1, 'mandatory'],
      [2, 'advisory'],
      [3, 'advisory'],
    ]);
    expect(detail.versions[0]?.module).toBe(MODULE);
    await core.useCases.policies.delete(alice, created.id);
    await expectFailure(core.useCases.policies.get(alice, created.id), NotFoundError, 'policy_not_found');
    const actions = [...core.uow.snapshot().audit.values()].map((entry) => entry.action);
    expect(actions.filter((action) => action.startsWith('policy.'))).toEqual([
      'policy.create',
      'policy.update',
      'policy.update',
      'policy.delete',
    ]);
  });

  it("let only an organization's admins manage its policies, and hide them from others", async () => {
    const { core, alice, bob } = await setup();
    const org = await core.useCases.orgs.create(alice, { name: 'acme' });
    await addAcceptedMember(core.useCases, alice, org.id, bob, 'operator');
    await expectFailure(
      core.useCases.policies.create(bob, { name: 'x', enforcement: 'mandatory', module: MODULE, org_id: org.id }),
      InsufficientRoleError,
    );
    const created = await core.useCases.policies.create(alice, {
      name: 'org-policy',
      enforcement: 'mandatory',
      module: MODULE,
      org_id: org.id,
    });
    expect(created.org_id).toBe(org.id);
    const carol = await core.useCases.auth.ensureUser({ email: 'carol@example.com' });
    await expectFailure(
      core.useCases.policies.get({ userId: carol.id, email: carol.email }, created.id),
      NotFoundError,
      'policy_not_found',
    );
    expect((await core.useCases.policies.list(alice, { org_id: org.id })).items.map((p) => p.id)).toEqual([created.id]);
    expect((await core.useCases.policies.list(alice, { org_id: 'personal' })).items).toHaveLength(0);
    expect((await core.useCases.policies.get(bob, created.id)).id).toBe(created.id);
    await expectFailure(
      core.useCases.policies.update(bob, created.id, { enforcement: 'advisory' }),
      InsufficientRoleError,
    );
    await expectFailure(core.useCases.policies.delete(bob, created.id), InsufficientRoleError);
    await core.useCases.policies.delete(alice, created.id);
  });

  it('refuse a vineyard the owner does not have', async () => {
    const { core, alice, bob } = await setup();
    const vine = await seedVine(core, bob);
    await expectFailure(
      core.useCases.policies.create(alice, {
        name: 'p',
        enforcement: 'mandatory',
        module: MODULE,
        vineyard_id: vine.vineyard_id,
      }),
      NotFoundError,
      'vineyard_not_found',
    );
  });

  it("travel with the claim of a PLAN of the vine's vineyard, at their current version; not with a DEPLOY", async () => {
    const { core, alice } = await setup();
    const vine = await seedVine(core, alice);
    const otherVine = await seedVine(core, alice);
    const wide = await core.useCases.policies.create(alice, { name: 'wide', enforcement: 'advisory', module: MODULE });
    await core.useCases.policies.update(alice, wide.id, { enforcement: 'mandatory' });
    const own = await core.useCases.policies.create(alice, {
      name: 'own',
      enforcement: 'mandatory',
      module: MODULE,
      vineyard_id: vine.vineyard_id,
    });
    const worker = await seedWorker(core, alice);
    await core.useCases.jobs.create(alice, { job_type: 'PLAN', configuration_id: vine.id });
    const claimed = await core.useCases.jobs.claim(worker);
    expect(claimed?.policies).toEqual([
      { id: wide.id, version: 2, name: 'wide', enforcement: 'mandatory', module: MODULE },
      { id: own.id, version: 1, name: 'own', enforcement: 'mandatory', module: MODULE },
    ]);
    expect(claimed?.vineyard).toMatchObject({ id: vine.vineyard_id });

    await core.useCases.jobs.create(alice, { job_type: 'PLAN', configuration_id: otherVine.id });
    const other = await core.useCases.jobs.claim(worker);
    expect(other?.policies.map((p) => p.name)).toEqual(['wide']);

    // A DEPLOY (of a plan: a mandatory policy applies, issue 23) carries none: its plan was checked.
    const checked = other!.job;
    await core.useCases.planArtifacts.upload(worker, checked.id, bodyOf('plan-bytes'));
    await core.useCases.jobs.reportStatus(worker, checked.id, {
      status: 'SUCCESS',
      execution_metadata: {
        policy_results: [
          { policy_id: wide.id, version: 2, name: 'wide', enforcement: 'mandatory', passed: true, messages: [] },
        ],
      },
    });
    await core.useCases.jobs.create(alice, {
      job_type: 'DEPLOY',
      configuration_id: otherVine.id,
      plan_job_id: checked.id,
    });
    expect((await core.useCases.jobs.claim(worker))?.policies).toEqual([]);
  });

  it('travel with the claim of a drift check, which is a PLAN too', async () => {
    const { core, alice } = await setup();
    const vine = await seedVine(core, alice);
    const worker = await seedWorker(core, alice, { heartbeat: true });
    const deploy = await core.useCases.jobs.create(alice, { job_type: 'DEPLOY', configuration_id: vine.id });
    expect((await core.useCases.jobs.claim(worker))?.job.id).toBe(deploy.id);
    await core.useCases.jobs.reportStatus(worker, deploy.id, { status: 'SUCCESS' });
    const policy = await core.useCases.policies.create(alice, { name: 'p', enforcement: 'advisory', module: MODULE });
    const check = await core.useCases.drift.checkNow(alice, vine.id);
    const claimed = await core.useCases.jobs.claim(worker);
    expect(claimed?.job).toMatchObject({ id: check.id, job_type: 'PLAN', trigger: { type: 'drift' } });
    expect(claimed?.policies.map((p) => [p.id, p.version])).toEqual([[policy.id, 1]]);
  });
});
