import { TrellisApiError } from '@trellis/client';
import { policyResultsOf, type PolicyResult } from '@trellis/core';
import { requirePeer } from '@trellis/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AgentProcess,
  type E2eServer,
  killLeftovers,
  logText,
  planOn,
  startAgent,
  startServer,
  TOFU,
  vineOf,
  waitForJob,
} from '../support/e2e.js';

const OPA = requirePeer('opa', 'policy checks with real OPA');

/** Denies a `terraform_data` whose input starts with "public-": what the `outputs` fixture makes of `cluster`. */
const NO_PUBLIC = `package trellis.public_names

deny contains msg if {
  some rc in input.resource_changes
  rc.type == "terraform_data"
  "create" in rc.change.actions
  startswith(rc.change.after.input, "public-")
  msg := sprintf("%s: the name %q is public (vine %s)", [rc.address, rc.change.after.input, input.trellis.vine.name])
}
`;

/** Warns of every resource the plan creates. */
const CREATES = `package advisory.creates

deny contains msg if {
  some rc in input.resource_changes
  "create" in rc.change.actions
  msg := sprintf("%s will be created in vineyard %s", [rc.address, input.trellis.vineyard.name])
}
`;

/** Passes: nothing is destroyed. */
const NO_DESTROY = `package nodestroy

deny contains msg if {
  some rc in input.resource_changes
  "delete" in rc.change.actions
  msg := sprintf("%s would be destroyed", [rc.address])
}
`;

function byName(results: PolicyResult[], name: string): PolicyResult | undefined {
  return results.find((result) => result.name === name);
}

/**
 * Policy checks of plans with real OpenTofu and the real OPA engine on a real agent (issue 15):
 * the control plane compiles modules when saved, the claim of a PLAN carries the policies of its
 * vine, the agent evaluates them on `tofu show -json` and reports `policy_results`.
 */
describe.skipIf(!TOFU || !OPA)('policies with real OpenTofu and OPA', { timeout: 240_000 }, () => {
  let server: E2eServer;
  let agent: AgentProcess;

  beforeAll(async () => {
    server = await startServer({ TRELLIS_OPA_BIN: OPA as string });
    agent = await startAgent(server, { name: 'policy-agent', env: { TRELLIS_OPA_BIN: OPA as string } });
  });

  afterAll(async () => {
    await agent?.stop();
    killLeftovers();
    await server?.stop();
  });

  it('refuses a module that does not compile, or has no deny rule, with the engine message', async () => {
    const broken = await server.user
      .createPolicy({
        name: 'broken',
        enforcement: 'mandatory',
        module: 'package broken\n\ndeny contains msg if {\n  msg :=\n}\n',
      })
      .catch((error: unknown) => error);
    expect(broken).toBeInstanceOf(TrellisApiError);
    expect(broken).toMatchObject({ status: 422, code: 'policy_invalid' });
    expect((broken as TrellisApiError).detail).toContain('rego_parse_error');
    expect((broken as TrellisApiError).detail).not.toContain('/tmp');

    const unsafe = await server.user
      .createPolicy({
        name: 'unsafe',
        enforcement: 'advisory',
        module: 'package unsafe\n\ndeny contains msg if { msg := y }\n',
      })
      .catch((error: unknown) => error);
    expect(unsafe).toMatchObject({ status: 422, code: 'policy_invalid' });
    expect((unsafe as TrellisApiError).detail).toContain('var y is unsafe');

    const noDeny = await server.user
      .createPolicy({ name: 'nodeny', enforcement: 'advisory', module: 'package nodeny\n\nallow := true\n' })
      .catch((error: unknown) => error);
    expect(noDeny).toMatchObject({ status: 422, code: 'policy_invalid' });
    expect((noDeny as TrellisApiError).detail).toContain('deny');
    expect(await server.user.listPolicies()).toEqual([]);
  });

  it('checks a plan: a mandatory failure, an advisory warning, a pass; versions stay pinned on the plan', async () => {
    const vine = await vineOf(server, 'guarded', 'outputs', { cluster: 'public-eu' });
    const other = await server.user.createVineyard('elsewhere');
    const mandatory = await server.user.createPolicy({
      name: 'no-public',
      enforcement: 'mandatory',
      module: NO_PUBLIC,
    });
    expect(mandatory).toMatchObject({ version: 1, enforcement: 'mandatory', vineyard_id: null });
    await server.user.createPolicy({ name: 'creates', enforcement: 'advisory', module: CREATES });
    await server.user.createPolicy({
      name: 'no-destroy',
      enforcement: 'mandatory',
      module: NO_DESTROY,
      vineyard_id: vine.vineyard_id,
    });
    // Another vineyard's policy does not apply to this vine.
    await server.user.createPolicy({
      name: 'elsewhere-only',
      enforcement: 'mandatory',
      module: NO_PUBLIC.replace('trellis.public_names', 'elsewhere'),
      vineyard_id: other.id,
    });

    const plan = await server.user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
    const done = await waitForJob(server, plan.id);
    expect(done.status).toBe('SUCCESS');
    const results = policyResultsOf(done.execution_metadata);
    expect(results.map((r) => r.name).sort()).toEqual(['creates', 'no-destroy', 'no-public']);
    expect(byName(results, 'no-public')).toEqual({
      policy_id: mandatory.id,
      version: 1,
      name: 'no-public',
      enforcement: 'mandatory',
      passed: false,
      messages: ['terraform_data.cluster: the name "public-eu" is public (vine guarded)'],
    });
    expect(byName(results, 'creates')).toMatchObject({
      enforcement: 'advisory',
      passed: false,
      messages: ['terraform_data.cluster will be created in vineyard guarded-yard'],
    });
    expect(byName(results, 'no-destroy')).toMatchObject({ passed: true, messages: [] });

    const log = await logText(server, plan.id);
    expect(log).toContain('policy no-public v1 (mandatory): FAILED');
    expect(log).toContain('  - terraform_data.cluster: the name "public-eu" is public (vine guarded)');
    expect(log).toContain('policy creates v1 (advisory): failed (advisory: a warning)');
    expect(log).toContain('policy no-destroy v1 (mandatory): passed');
    expect(log).toContain('policies: 1 passed, 1 mandatory failed, 1 advisory failed');
    // The plan's JSON is an input file of the workspace, never in the log.
    expect(log).not.toContain('"resource_changes"');

    // The gate: the failed mandatory policy blocks the deploy until the owner overrides it.
    const refused = await server.user
      .createJob({ job_type: 'DEPLOY', configuration_id: vine.id, plan_job_id: plan.id })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TrellisApiError);
    expect((refused as TrellisApiError).status).toBe(409);
    expect((refused as TrellisApiError).code).toBe('policy_failed');
    expect((refused as TrellisApiError).extensions['failed_policies']).toEqual([
      {
        policy_id: mandatory.id,
        version: 1,
        name: 'no-public',
        messages: ['terraform_data.cluster: the name "public-eu" is public (vine guarded)'],
      },
    ]);
    const overridden = await server.user.overridePlan(plan.id, { reason: 'a public demo cluster, agreed in review' });
    expect(overridden.policy_override).toMatchObject({ reason: 'a public demo cluster, agreed in review' });
    const deploy = await server.user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id, plan_job_id: plan.id });
    expect((await waitForJob(server, deploy.id)).status).toBe('SUCCESS');

    // A new version after the plan: the plan keeps the version it was checked with.
    const updated = await server.user.updatePolicy(mandatory.id, {
      module: NO_PUBLIC.replace('"public-"', '"open-"'),
    });
    expect(updated.version).toBe(2);
    const detail = await server.user.getPolicy(mandatory.id);
    expect(detail.versions.map((v) => v.version)).toEqual([1, 2]);
    expect(detail.versions[0]?.module).toBe(NO_PUBLIC);
    const again = await server.user.getJob(plan.id);
    expect(byName(policyResultsOf(again.execution_metadata), 'no-public')).toMatchObject({ version: 1, passed: false });

    // The next plan is checked with version 2, which passes.
    const second = await server.user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
    const secondDone = await waitForJob(server, second.id);
    expect(byName(policyResultsOf(secondDone.execution_metadata), 'no-public')).toMatchObject({
      version: 2,
      passed: true,
      messages: [],
    });
  });

  it('holds the deploy of a vine that requires approval until the plan is approved', async () => {
    const vine = await vineOf(server, 'reviewed', 'outputs', { cluster: 'private-eu' });
    await server.user.updateConfiguration(vine.id, { approval: { required: true } });
    const plan = await server.user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
    expect((await waitForJob(server, plan.id)).status).toBe('SUCCESS');
    const held = await server.user
      .createJob({ job_type: 'DEPLOY', configuration_id: vine.id, plan_job_id: plan.id })
      .catch((error: unknown) => error);
    expect((held as TrellisApiError).code).toBe('approval_required');
    const approved = await server.user.approvePlan(plan.id, { comment: 'looks right' });
    expect(approved.approval).toMatchObject({ decision: 'approved', comment: 'looks right' });
    const deploy = await server.user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id, plan_job_id: plan.id });
    expect((await waitForJob(server, deploy.id)).status).toBe('SUCCESS');
  });
});

/**
 * A control plane without OPA accepts modules it cannot compile (the agent reports the engine's
 * error then), and an agent without OPA fails a plan that policies apply to.
 */
describe.skipIf(!TOFU || !OPA)('policies where an engine is missing', { timeout: 240_000 }, () => {
  let server: E2eServer;
  let withOpa: AgentProcess;
  let withoutOpa: AgentProcess;

  beforeAll(async () => {
    server = await startServer({ TRELLIS_OPA_BIN: 'trellis-test-no-such-opa' });
    withOpa = await startAgent(server, { name: 'with-opa', env: { TRELLIS_OPA_BIN: OPA as string } });
    withoutOpa = await startAgent(server, {
      name: 'without-opa',
      env: { TRELLIS_OPA_BIN: 'trellis-test-no-such-opa' },
    });
  });

  afterAll(async () => {
    await withOpa?.stop();
    await withoutOpa?.stop();
    killLeftovers();
    await server?.stop();
  });

  it('reports a module that does not compile at the agent as a failed policy with the engine message', async () => {
    expect(server.output()).toContain('no Open Policy Agent binary');
    const vine = await vineOf(server, 'uncompiled', 'outputs', { cluster: 'eu' });
    const unsafe = await server.user.createPolicy({
      name: 'unsafe',
      enforcement: 'mandatory',
      module: 'package unsafe\n\ndeny contains msg if { msg := y }\n',
    });
    await server.user.createPolicy({ name: 'fine', enforcement: 'advisory', module: NO_DESTROY });
    const done = await planOn(server, vine.id, withOpa);
    expect(done.status).toBe('SUCCESS');
    const results = policyResultsOf(done.execution_metadata);
    expect(byName(results, 'unsafe')).toMatchObject({ policy_id: unsafe.id, passed: false });
    expect(byName(results, 'unsafe')?.messages[0]).toContain('var y is unsafe');
    expect(byName(results, 'fine')).toMatchObject({ passed: true });
  });

  it('fails a plan whose policies cannot be evaluated: never a silent pass', async () => {
    const vine = await vineOf(server, 'unchecked', 'outputs', { cluster: 'eu' });
    const done = await planOn(server, vine.id, withoutOpa);
    expect(done.status).toBe('FAILED');
    expect(done.error_message).toMatch(/policies apply to this vine but this agent has no OPA engine/);
    expect(done.execution_metadata.policy_results).toBeUndefined();
    expect(await logText(server, done.id)).toContain('no OPA engine');
  });
});
