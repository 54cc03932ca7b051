import { TrellisApiError, type TrellisClient } from '@trellis/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningControlPlane, startControlPlane, vineyardWithConfiguration } from './support/controlPlane.js';
import { describeEachDialect } from './support/dialects.js';

async function apiError(promise: Promise<unknown>): Promise<TrellisApiError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof TrellisApiError) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
}

describeEachDialect('vineyards, configurations and jobs over HTTP', (dialect) => {
  let server: RunningControlPlane;
  let alice: TrellisClient;
  let bob: TrellisClient;

  beforeAll(async () => {
    server = await startControlPlane(dialect);
    alice = await server.userClient('alice@example.com');
    bob = await server.userClient('bob@example.com');
  });
  afterAll(async () => {
    await server?.close();
  });

  it('creates, lists and shows vineyards with their vines', async () => {
    const { vineyard, configuration } = await vineyardWithConfiguration(alice, 'shop');
    expect(vineyard).toMatchObject({ name: 'shop-yard', vines: [] });
    const listed = await alice.listVineyards();
    const found = listed.find((v) => v.id === vineyard.id);
    expect(found?.vines.map((v) => v.id)).toEqual([configuration.id]);
    expect((await alice.getVineyard(vineyard.id)).vines[0]?.name).toBe('shop');
    expect((await apiError(alice.createVineyard('shop-yard'))).code).toBe('vineyard_name_taken');
  });

  it('creates configurations and finds them by name, id and project name, secrets hidden', async () => {
    const { configuration } = await vineyardWithConfiguration(alice, 'api');
    expect(configuration.status).toBe('NEW');
    expect(configuration.variables.db_password).toEqual({ value: '***', sensitive: true });
    expect(configuration.variables.greeting).toEqual({ value: 'hi', sensitive: false });
    expect((await alice.getConfiguration('api')).id).toBe(configuration.id);
    expect((await alice.getConfiguration(configuration.id)).name).toBe('api');
    expect((await alice.getConfigurationByProjectName('api')).id).toBe(configuration.id);
    expect((await alice.listConfigurations()).map((c) => c.name)).toContain('api');
    const text = JSON.stringify(await alice.listConfigurations());
    expect(text).not.toContain('s3cret-value');
  });

  it('reports every invalid configuration field at once', async () => {
    const error = await apiError(
      alice.createConfiguration({
        name: 'bad name',
        vineyard_id: 'nope',
        source: { type: 'git', url: '' },
      } as never),
    );
    expect(error.status).toBe(400);
    expect(error.code).toBe('validation_failed');
    expect(error.errors.map((e) => e.path).sort()).toEqual(['name', 'source.url', 'vineyard_id']);
  });

  it('creates a cloud identity with a generated external id', async () => {
    const vineyard = await alice.createVineyard('aws-yard');
    const vine = await alice.createConfiguration({
      name: 'eks',
      vineyard_id: vineyard.id,
      source: { type: 'git', url: 'https://git.example.com/infra.git', ref: 'main', path: 'eks' },
      cloud_identity: { role_arn: 'arn:aws:iam::123456789012:role/deployer' },
    });
    expect(vine.cloud_identity).toMatchObject({ provider: 'aws', role_arn: 'arn:aws:iam::123456789012:role/deployer' });
    expect(vine.cloud_identity?.external_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('queues jobs with a snapshot and hash, lists, filters and cancels them', async () => {
    const { vineyard, configuration } = await vineyardWithConfiguration(alice, 'jobs');
    const job = await alice.createJob({ job_type: 'PLAN', configuration_id: configuration.id });
    expect(job).toMatchObject({ status: 'QUEUED', vine_id: configuration.id, vineyard_id: vineyard.id });
    expect(job.config_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(job.config_snapshot.variables.db_password?.value).toBe('***');
    expect((await alice.listJobs({ vineyard_id: vineyard.id })).map((j) => j.id)).toEqual([job.id]);
    expect((await alice.listJobs({ status: 'SUCCESS', vineyard_id: vineyard.id })).length).toBe(0);
    const cancelled = await alice.cancelJob(job.id);
    expect(cancelled.status).toBe('CANCELLED');
    expect((await apiError(alice.cancelJob(job.id))).code).toBe('invalid_transition');
    expect((await alice.getJob(job.id)).status).toBe('CANCELLED');
  });

  it('refuses a job without what its type needs', async () => {
    expect((await apiError(alice.createJob({ job_type: 'PLAN' }))).status).toBe(400);
    expect((await apiError(alice.createJob({ job_type: 'DESTROY_WORKER' }))).status).toBe(400);
    const missing = await apiError(alice.createJob({ job_type: 'PLAN', configuration_id: crypto.randomUUID() }));
    expect([missing.status, missing.code]).toEqual([404, 'configuration_not_found']);
  });

  it('answers 404 for every record of another user', async () => {
    const { vineyard, configuration } = await vineyardWithConfiguration(alice, 'private');
    const job = await alice.createJob({ job_type: 'PLAN', configuration_id: configuration.id });
    const agent = await server.agentClient(alice, 'alice-agent');
    const attempts: [string, () => Promise<unknown>][] = [
      ['vineyard', () => bob.getVineyard(vineyard.id)],
      ['configuration by id', () => bob.getConfiguration(configuration.id)],
      ['configuration by name', () => bob.getConfiguration('private')],
      ['configuration by project', () => bob.getConfigurationByProjectName('private')],
      ['job', () => bob.getJob(job.id)],
      ['job logs', () => bob.getJobLogs(job.id)],
      ['cancel', () => bob.cancelJob(job.id)],
      ['worker', () => bob.getWorker(agent.workerId)],
      ['job on configuration', () => bob.createJob({ job_type: 'PLAN', configuration_id: configuration.id })],
    ];
    for (const [what, attempt] of attempts) {
      const error = await apiError(attempt());
      expect(error.status, what).toBe(404);
    }
    expect((await bob.listVineyards()).map((v) => v.id)).not.toContain(vineyard.id);
    expect((await bob.listJobs()).map((j) => j.id)).not.toContain(job.id);
    expect((await bob.listConfigurations()).map((c) => c.id)).not.toContain(configuration.id);
    expect((await bob.listWorkers()).map((w) => w.id)).not.toContain(agent.workerId);
    expect((await alice.getJob(job.id)).status).toBe('QUEUED');
  });

  it('stores SQL-looking strings literally', async () => {
    const carol = await server.userClient('carol@example.com');
    const vineyard = await carol.createVineyard('literal');
    const sql = '\'; DROP TABLE jobs; -- " OR 1=1 --';
    const vine = await carol.createConfiguration({
      name: 'literal',
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': sql } },
      variables: { note: sql },
    });
    expect((await carol.getConfiguration(vine.id)).variables.note?.value).toBe(sql);
    const job = await carol.createJob({ job_type: 'PLAN', configuration_id: vine.id });
    const agent = await server.agentClient(carol, 'literal-agent');
    expect((await agent.claimJob())?.job.id).toBe(job.id);
    await agent.appendLog(job.id, sql, 'STDOUT');
    expect((await carol.getJobLogs(job.id)).logs[0]?.log_chunk).toBe(sql);
    expect((await carol.listJobs()).map((j) => j.id)).toEqual([job.id]);
  });
});
