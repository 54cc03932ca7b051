import { TrellisApiError } from '@trellis/client';
import { policyResultsOf } from '@trellis/core';
import { requirePeer } from '@trellis/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AgentProcess,
  type E2eServer,
  killLeftovers,
  logText,
  startAgent,
  startServer,
  TOFU,
  vineOf,
  waitForJob,
} from '../support/e2e.js';

const OPA = requirePeer('opa', 'policy checks of destroys with real OPA');

/** Fails whenever the plan deletes a resource. */
const NO_DESTROY = `package nodestroy

deny contains msg if {
  some rc in input.resource_changes
  "delete" in rc.change.actions
  msg := sprintf("%s would be destroyed by a %s job", [rc.address, input.trellis.job.job_type])
}
`;

async function refusal(promise: Promise<unknown>): Promise<TrellisApiError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(TrellisApiError);
  return error as TrellisApiError;
}

/**
 * The deploy gate on destroys (issue 23) with a real agent, real OpenTofu and real OPA: the agent
 * evaluates the vine's policies on the destroy plan before it destroys, and a failed mandatory
 * policy stops the destroy (nothing is destroyed); a vine that requires approval destroys only an
 * approved destroy plan, which the agent applies as it is.
 */
describe.skipIf(!TOFU || !OPA)(
  'destroys through the deploy gate with real OpenTofu and OPA',
  { timeout: 300_000 },
  () => {
    let server: E2eServer;
    let agent: AgentProcess;

    beforeAll(async () => {
      server = await startServer({ TRELLIS_OPA_BIN: OPA as string });
      agent = await startAgent(server, { name: 'destroy-agent', env: { TRELLIS_OPA_BIN: OPA as string } });
    });

    afterAll(async () => {
      await agent?.stop();
      killLeftovers();
      await server?.stop();
    });

    it('a failed mandatory policy on the destroy plan stops a DESTROY before anything is destroyed', async () => {
      const vine = await vineOf(server, 'kept', 'outputs', { cluster: 'kept-eu' });
      const deploy = await server.user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id });
      expect((await waitForJob(server, deploy.id)).status).toBe('SUCCESS');
      const policy = await server.user.createPolicy({
        name: 'no-destroy',
        enforcement: 'mandatory',
        module: NO_DESTROY,
        vineyard_id: vine.vineyard_id,
      });

      const destroy = await server.user.createJob({ job_type: 'DESTROY', configuration_id: vine.id });
      const stopped = await waitForJob(server, destroy.id);
      expect(stopped.status).toBe('FAILED');
      expect(stopped.error_message).toBe(
        'the destroy plan failed a mandatory policy (no-destroy: terraform_data.cluster would be destroyed by a DESTROY job); nothing was destroyed',
      );
      expect(policyResultsOf(stopped.execution_metadata)).toEqual([
        {
          policy_id: policy.id,
          version: 1,
          name: 'no-destroy',
          enforcement: 'mandatory',
          passed: false,
          messages: ['terraform_data.cluster would be destroyed by a DESTROY job'],
        },
      ]);
      expect(stopped.claimed_policies).toEqual([
        { policy_id: policy.id, version: 1, name: 'no-destroy', enforcement: 'mandatory' },
      ]);
      const log = await logText(server, destroy.id);
      expect(log).toContain('policy no-destroy v1 (mandatory): FAILED');
      expect(log).toContain(
        'policies: 0 passed, 1 mandatory failed, 0 advisory failed; the destroy stops: nothing is destroyed',
      );
      expect(log).not.toContain('Destroy complete!');

      // Nothing was destroyed: a plan of the vine still finds its resource in the state.
      const plan = await server.user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
      const planned = await waitForJob(server, plan.id);
      expect(planned.status).toBe('SUCCESS');
      expect(planned.execution_metadata.plan_summary).toEqual({ add: 0, change: 0, destroy: 0 });

      // A DEPLOY without a plan on a vine with a mandatory policy is refused, naming what to do.
      const planless = await refusal(server.user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id }));
      expect(planless).toMatchObject({ status: 409, code: 'plan_required' });
      expect(planless.detail).toContain('plan first: `trellis plan kept`');
    });

    it('a vine that requires approval destroys only an approved destroy plan, applied as planned', async () => {
      const vine = await vineOf(server, 'reviewed', 'outputs', { cluster: 'reviewed-eu' });
      const deploy = await server.user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id });
      expect((await waitForJob(server, deploy.id)).status).toBe('SUCCESS');
      await server.user.updateConfiguration(vine.id, { approval: { required: true } });

      const planless = await refusal(server.user.createJob({ job_type: 'DESTROY', configuration_id: vine.id }));
      expect(planless).toMatchObject({ status: 409, code: 'plan_required' });
      expect(planless.detail).toContain('`trellis plan reviewed --destroy`');

      const destroyPlan = await server.user.createJob({ job_type: 'PLAN', configuration_id: vine.id, destroy: true });
      const planned = await waitForJob(server, destroyPlan.id);
      expect(planned.status).toBe('SUCCESS');
      expect(planned.config_snapshot.destroy).toBe(true);
      expect(planned.execution_metadata.plan_summary).toEqual({ add: 0, change: 0, destroy: 1 });
      expect(await logText(server, destroyPlan.id)).toContain('a destroy plan');

      // A destroy plan is never deployed; a DESTROY of it waits for the approval.
      const asDeploy = await refusal(
        server.user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id, plan_job_id: destroyPlan.id }),
      );
      expect(asDeploy.code).toBe('plan_kind_mismatch');
      const unapproved = await refusal(
        server.user.createJob({ job_type: 'DESTROY', configuration_id: vine.id, plan_job_id: destroyPlan.id }),
      );
      expect(unapproved.code).toBe('approval_required');
      expect((await server.user.getJob(destroyPlan.id)).actions?.apply).toMatchObject({
        allowed: false,
        code: 'approval_required',
      });

      await server.user.approvePlan(destroyPlan.id, { comment: 'retiring it' });
      expect((await server.user.getJob(destroyPlan.id)).actions?.apply).toEqual({ allowed: true });
      const destroy = await server.user.createJob({
        job_type: 'DESTROY',
        configuration_id: vine.id,
        plan_job_id: destroyPlan.id,
      });
      expect((await waitForJob(server, destroy.id)).status).toBe('SUCCESS');
      expect(await logText(server, destroy.id)).toContain(`applying the destroy plan of job ${destroyPlan.id}`);

      // Destroyed: the next plan creates the resource again.
      const after = await server.user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
      expect((await waitForJob(server, after.id)).execution_metadata.plan_summary).toEqual({
        add: 1,
        change: 0,
        destroy: 0,
      });
    });
  },
);
