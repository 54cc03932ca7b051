import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AgentProcess,
  deployOn,
  type E2eServer,
  FIXTURES,
  killLeftovers,
  logText,
  planOn,
  startAgent,
  startServer,
  TOFU,
  vineOf,
  waitForJob,
} from '../support/e2e.js';

const API_TOKEN = 'tok-4f9c2e7a-very-secret';

describe.skipIf(!TOFU)('trellis-agent runs jobs with real OpenTofu', { timeout: 180_000 }, () => {
  let server: E2eServer;
  let agentA: AgentProcess;
  let agentB: AgentProcess;

  beforeAll(async () => {
    server = await startServer();
    [agentA, agentB] = await Promise.all([
      // The git test clones a file:// repository: these agents allow file sources.
      startAgent(server, { name: 'agent-a', env: { TRELLIS_ALLOW_FILE_SOURCES: '1' } }),
      startAgent(server, { name: 'agent-b', args: ['--allow-file-sources'] }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([agentA?.stop(), agentB?.stop()]);
    killLeftovers();
    await server?.stop();
  });

  it('plans on one agent, applies that plan on another, then destroys', async () => {
    const vine = await vineOf(server, 'prod-eu', 'outputs', {
      cluster: 'prod-eu',
      api_token: { value: API_TOKEN, sensitive: true },
    });
    const plan = await planOn(server, vine.id, agentA);
    expect(plan).toMatchObject({ status: 'SUCCESS', claimed_by_worker_id: agentA.workerId });
    expect(plan.execution_metadata.plan_summary).toEqual({ add: 1, change: 0, destroy: 0 });
    // The addresses a pull request comment lists.
    expect(plan.execution_metadata.resource_changes).toEqual([
      { address: 'terraform_data.cluster', actions: ['create'] },
    ]);
    expect(plan.execution_metadata.resource_changes_omitted).toBe(0);
    const planLog = await logText(server, plan.id);
    expect(planLog).toContain('Plan: 1 to add, 0 to change, 0 to destroy.');
    expect(planLog).toMatch(/plan uploaded: \d+ bytes, sha256 [0-9a-f]{64}/);
    expect((await server.user.getConfiguration(vine.id)).status).toBe('PLANNED');

    const deploy = await deployOn(server, vine.id, plan, agentB);
    const deployed = await waitForJob(server, deploy.id);
    expect(deployed).toMatchObject({ status: 'SUCCESS', claimed_by_worker_id: agentB.workerId });
    const deployLog = await logText(server, deploy.id);
    expect(deployLog).toMatch(new RegExp(`plan of job ${plan.id} downloaded: \\d+ bytes, sha256 [0-9a-f]{64} checked`));
    expect(deployLog).toContain('Apply complete! Resources: 1 added, 0 changed, 0 destroyed.');
    expect(deployLog).toContain('provisioning cluster prod-eu');
    expect(deployed.execution_metadata).toMatchObject({
      cluster_name: 'prod-eu',
      cluster_endpoint: 'https://prod-eu.k8s.example.com',
      argocd_url: 'https://argocd.prod-eu.example.com',
      sensitive_outputs: ['api_token'],
    });
    expect(JSON.stringify(deployed.execution_metadata)).not.toContain(API_TOKEN);

    const view = await server.user.getConfiguration(vine.id);
    expect(view.status).toBe('DEPLOYED');
    expect(view.components.cluster).toMatchObject({ name: 'prod-eu', endpoint: 'https://prod-eu.k8s.example.com' });
    expect(view.components.argocd).toMatchObject({ url: 'https://argocd.prod-eu.example.com' });
    expect(view.components.outputs?.values).toEqual({
      cluster_name: 'prod-eu',
      cluster_endpoint: 'https://prod-eu.k8s.example.com',
      argocd_url: 'https://argocd.prod-eu.example.com',
      replicas: 3,
    });
    // The sensitive output is named (for `configs show` to mask), its value never stored.
    expect(view.components.outputs?.sensitive).toEqual(['api_token']);
    expect(JSON.stringify(view)).not.toContain(API_TOKEN);

    const destroy = await server.user.createJob({ job_type: 'DESTROY', configuration_id: vine.id });
    expect(await waitForJob(server, destroy.id)).toMatchObject({ status: 'SUCCESS' });
    expect(await logText(server, destroy.id)).toContain('Destroy complete! Resources: 1 destroyed.');
    const destroyed = await server.user.getConfiguration(vine.id);
    expect(destroyed.status).toBe('DESTROYED');
    expect(destroyed.components).toMatchObject({ cluster: null, argocd: null, outputs: null });

    for (const id of [plan.id, deploy.id, destroy.id]) expect(await logText(server, id)).not.toContain(API_TOKEN);
  });

  it('applies a plan on the agent that made it in the kept workspace: no download, no init (issue 31)', async () => {
    const vine = await vineOf(server, 'warm-eu', 'outputs', { cluster: 'warm-eu' });
    const plan = await planOn(server, vine.id, agentA);
    expect(plan).toMatchObject({ status: 'SUCCESS' });
    // Assigned, so the test does not hang on which agent claims first; the offer is core's (deployOffer.test.ts).
    const deploy = await deployOn(server, vine.id, plan, agentA);
    const deployed = await waitForJob(server, deploy.id);
    const log = await logText(server, deploy.id);
    expect(deployed, log).toMatchObject({ status: 'SUCCESS', claimed_by_worker_id: agentA.workerId });
    expect(log).toContain("source: the plan's own, kept on this agent");
    expect(log).toContain('init: skipped');
    expect(log).toContain(`plan of job ${plan.id}: the file this agent made and kept`);
    expect(log).not.toMatch(/^\$ \S+ init/m);
    expect(log).toContain('Apply complete! Resources: 1 added, 0 changed, 0 destroyed.');
    expect(deployed.execution_metadata).toMatchObject({ cluster_name: 'warm-eu' });
  });

  it('deploys without a plan: plans and applies in one job, state kept by the control plane', async () => {
    const vine = await vineOf(server, 'direct', 'outputs', { cluster: 'direct' });
    const first = await server.user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id });
    const done = await waitForJob(server, first.id);
    expect(done.status).toBe('SUCCESS');
    expect(done.execution_metadata.plan_summary).toEqual({ add: 1, change: 0, destroy: 0 });
    const log = await logText(server, first.id);
    expect(log).toContain('Plan: 1 to add');
    expect(log).toContain('Apply complete! Resources: 1 added');
    expect(log).toContain('state: the Trellis control plane');
    // The second run starts from the state the first one stored: nothing left to do.
    const second = await server.user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id });
    const again = await waitForJob(server, second.id);
    expect(again.status).toBe('SUCCESS');
    expect(again.execution_metadata.plan_summary).toEqual({ add: 0, change: 0, destroy: 0 });
    expect((await server.user.getConfiguration(vine.id)).components.cluster?.name).toBe('direct');
  });

  it('fails a job on a configuration error with the engine’s error line, on the job and the vine', async () => {
    const vine = await vineOf(server, 'broken', 'broken');
    const job = await server.user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
    const failed = await waitForJob(server, job.id);
    expect(failed.status).toBe('FAILED');
    expect(failed.error_message).toBe('Error: Reference to undeclared resource');
    const view = await server.user.getConfiguration(vine.id);
    expect(view).toMatchObject({ status: 'FAILED', status_message: 'Error: Reference to undeclared resource' });
    const log = await logText(server, job.id);
    expect(log).toContain('There is no managed resource "undefined_thing" "value"');
    expect(log).toContain('job failed: Error: Reference to undeclared resource');
  });

  it('hands the engine a variable larger than an environment entry may be, through a file', async () => {
    // Over Linux's 128 KiB cap on one environment string: as TF_VAR_blob it failed with spawn E2BIG.
    const blob = 'trellis-'.repeat(24 * 1024);
    const vine = await vineOf(server, 'big-variable', 'big-variable', { blob });
    const job = await server.user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id });
    const done = await waitForJob(server, job.id);
    expect(done.status).toBe('SUCCESS');
    expect(done.execution_metadata.outputs).toMatchObject({
      blob_length: { value: blob.length },
      blob_sha256: { value: createHash('sha256').update(blob).digest('hex') },
    });
    expect(await logText(server, job.id)).toMatch(/-var-file=\S+trellis\.tfvars\.json/);
  });

  it('gives complex variables set as text to the engine as expressions, as TF_VAR_ did', async () => {
    const vine = await vineOf(server, 'typed-variables', 'typed-variables', {
      tags: '{ team = "web", env = "prod" }', // HCL, not JSON
      zones: '["a", "b"]',
      replicas: '2',
      policy: { value: '{"Version":"2012-10-17"}', sensitive: true },
    });
    const job = await server.user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id });
    const done = await waitForJob(server, job.id);
    expect(done.status).toBe('SUCCESS');
    expect(done.execution_metadata.outputs).toMatchObject({ summary: { value: 'env,team|a,b|3|2012-10-17' } });
  });

  it('never lets a secret variable’s value reach the stored log', async () => {
    const secret = 'pa55-w0rd-7d1e0b-secret';
    const vine = await vineOf(server, 'secret-echo', 'secret-echo', {
      db_password: { value: secret, sensitive: true },
    });
    const job = await server.user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id });
    expect((await waitForJob(server, job.id)).status).toBe('SUCCESS');
    const log = await logText(server, job.id);
    expect(log).toContain('connecting with password ***');
    expect(log).toContain('split:***');
    expect(log).not.toContain(secret);
    expect(log).not.toContain(agentA.workerToken);
    expect(log).not.toContain(agentB.workerToken);
  });

  it('clones a git source at a ref and runs the configuration in its path', async () => {
    const repo = mkdtempSync(join(tmpdir(), 'trellis-agent-git-'));
    try {
      const work = join(repo, 'work');
      mkdirSync(join(work, 'infra'), { recursive: true });
      cpSync(join(FIXTURES, 'outputs', 'main.tf'), join(work, 'infra', 'main.tf'));
      const git = (...args: string[]) =>
        execFileSync('git', args, {
          cwd: work,
          env: {
            ...process.env,
            GIT_AUTHOR_NAME: 't',
            GIT_AUTHOR_EMAIL: 't@e',
            GIT_COMMITTER_NAME: 't',
            GIT_COMMITTER_EMAIL: 't@e',
          },
        });
      git('init', '--quiet', '--initial-branch=main');
      git('add', '.');
      git('commit', '--quiet', '-m', 'infra');
      git('tag', 'v1');
      execFileSync('git', ['clone', '--quiet', '--bare', work, join(repo, 'infra.git')]);
      const vineyard = await server.user.createVineyard('git-yard');
      const vine = await server.user.createConfiguration({
        name: 'from-git',
        vineyard_id: vineyard.id,
        source: { type: 'git', url: `file://${join(repo, 'infra.git')}`, ref: 'v1', path: 'infra' },
        variables: { cluster: 'from-git' },
      });
      const job = await server.user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id });
      const done = await waitForJob(server, job.id);
      expect(done.status).toBe('SUCCESS');
      expect(done.execution_metadata.cluster_name).toBe('from-git');
      expect(await logText(server, job.id)).toContain('source: git file://');
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });
});
