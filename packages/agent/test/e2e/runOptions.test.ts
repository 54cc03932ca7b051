/**
 * Run options (issue 27) with a real agent and the pinned OpenTofu: a PLAN with `-target` plans
 * only its target, its DEPLOY applies exactly that (the other resource stays unmade until a full
 * plan), and a `-replace` plan replaces what it names.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { vineyardWithVine } from '@trellis/testkit';
import {
  type AgentProcess,
  type E2eServer,
  killLeftovers,
  logText,
  startAgent,
  startServer,
  TOFU,
  waitForJob,
} from '../support/e2e.js';

const MAIN_TF = `
resource "terraform_data" "a" {
  input = "a"
}

resource "terraform_data" "b" {
  input = "b"
}
`;

describe.skipIf(!TOFU)('run options with real OpenTofu', { timeout: 180_000 }, () => {
  let server: E2eServer;
  let agent: AgentProcess;

  beforeAll(async () => {
    server = await startServer();
    agent = await startAgent(server, { name: 'targets' });
  });
  afterAll(async () => {
    await agent?.stop();
    killLeftovers();
    await server?.stop();
  });

  it('plans and applies only the target; replaces what -replace names', async () => {
    const { vine } = await vineyardWithVine(server.user, 'targeted', {
      source: { type: 'inline', files: { 'main.tf': MAIN_TF } },
      variables: {},
      engine: 'tofu',
    });
    const plan = await server.user.createJob({
      job_type: 'PLAN',
      configuration_id: vine.id,
      run_options: { target: ['terraform_data.a'] },
    });
    const planned = await waitForJob(server, plan.id);
    const planLog = await logText(server, plan.id);
    expect(planned.status, planLog).toBe('SUCCESS');
    expect(planLog).toContain('plan: run options -target=terraform_data.a');
    expect(planned.execution_metadata.resource_changes).toEqual([{ address: 'terraform_data.a', actions: ['create'] }]);
    expect(planned.execution_metadata.plan_summary).toEqual({ add: 1, change: 0, destroy: 0 });

    const deploy = await server.user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id, plan_job_id: plan.id });
    const deployed = await waitForJob(server, deploy.id);
    const deployLog = await logText(server, deploy.id);
    expect(deployed.status, deployLog).toBe('SUCCESS');
    expect(deployLog).toContain('Apply complete! Resources: 1 added, 0 changed, 0 destroyed.');

    // The untargeted resource was never made: a full plan adds only it.
    const full = await waitForJob(
      server,
      (await server.user.createJob({ job_type: 'PLAN', configuration_id: vine.id })).id,
    );
    expect(full.execution_metadata.resource_changes).toEqual([{ address: 'terraform_data.b', actions: ['create'] }]);

    const replace = await waitForJob(
      server,
      (
        await server.user.createJob({
          job_type: 'PLAN',
          configuration_id: vine.id,
          run_options: { replace: ['terraform_data.a'], refresh: false },
        })
      ).id,
    );
    const replaceLog = await logText(server, replace.id);
    expect(replace.status, replaceLog).toBe('SUCCESS');
    expect(replaceLog).toContain('-replace=terraform_data.a -refresh=false');
    expect(replace.execution_metadata.resource_changes).toEqual(
      expect.arrayContaining([
        { address: 'terraform_data.a', actions: ['delete', 'create'] },
        { address: 'terraform_data.b', actions: ['create'] },
      ]),
    );
  });
});
