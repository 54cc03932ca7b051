/**
 * Issue 11 §1: the answers of a real control plane (over HTTP, SQLite) match the contract's
 * response schemas exactly: every field documented (parsing drops undocumented ones, so the parsed
 * answer must equal the answer), every enum and format as the schemas say.
 */
import {
  AgentJob,
  ArtifactResponse,
  ClaimResponse,
  ConfigurationList,
  HeartbeatResponse,
  Job,
  JobDetail,
  JobList,
  LogPage,
  PlanChangesResponse,
  LogPostResponse,
  RegistrationResponse,
  Release,
  ReleaseList,
  VineDetail,
  Vineyard,
  VineyardList,
  WhoAmIResponse,
  Worker,
  WorkerList,
} from '@trellis/contract';
import { TrellisClient } from '@trellis/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  RELEASE_SECRET,
  type RunningControlPlane,
  startControlPlane,
  vineyardWithConfiguration,
} from '../../server/test/support/controlPlane.js';

/** The answer, checked against its schema: valid, and with nothing the schema does not name. */
function expectConforms(schema: z.ZodType, answer: unknown): void {
  const parsed = schema.safeParse(answer);
  expect(parsed.error?.issues ?? []).toEqual([]);
  expect(parsed.data).toEqual(answer);
}

describe('answers of a running server against the contract', () => {
  let server: RunningControlPlane;
  let user: TrellisClient;

  beforeAll(async () => {
    server = await startControlPlane('sqlite');
    user = await server.userClient('contract@example.com');
  });
  afterAll(async () => {
    await server?.close();
  });

  it('checks what it is meant to: an undocumented field or a wrong enum fails', () => {
    const worker = {
      id: '0b7e8a38-4a2e-4d8e-9a43-5c1f6f1f1e11',
      owner_id: '0b7e8a38-4a2e-4d8e-9a43-5c1f6f1f1e12',
      name: 'w',
      mode: 'self-hosted',
      status: 'ONLINE',
      last_heartbeat: null,
      version: null,
      metadata: {},
      created_at: '2026-01-01T00:00:00.000Z',
      destroyed_at: null,
    };
    expectConforms(Worker, worker);
    expect(() => expectConforms(Worker, { ...worker, token_hash: 'x' })).toThrow();
    expect(() => expectConforms(Worker, { ...worker, status: 'SLEEPING' })).toThrow();
  });

  it('matches for the CLI side: user, vineyards, configurations, jobs, workers', async () => {
    expectConforms(WhoAmIResponse, await user.whoami());
    const { vineyard, configuration } = await vineyardWithConfiguration(user, 'contract');
    expectConforms(Vineyard, vineyard);
    expectConforms(VineDetail, configuration);
    expectConforms(Vineyard, await user.getVineyard(vineyard.id));
    expectConforms(VineDetail, await user.getConfiguration(configuration.id));
    const git = await user.createConfiguration({
      name: 'contract-git',
      vineyard_id: vineyard.id,
      source: { type: 'git', url: 'https://git.example.test/infra.git' },
    });
    expectConforms(VineDetail, git);
    expectConforms(VineyardList, { vineyards: (await user.listVineyardsPage()).items });
    expectConforms(ConfigurationList, { configurations: (await user.listConfigurationsPage()).items });

    const job = await user.createJob({ job_type: 'PLAN', configuration_id: configuration.id });
    expectConforms(Job, job);
    expectConforms(JobDetail, await user.getJob(job.id));
    expectConforms(JobList, { jobs: (await user.listJobsPage()).items });
    expectConforms(LogPage, await user.getJobLogs(job.id));

    expectConforms(RegistrationResponse, await user.registerWorker({ name: 'contract-worker' }));
    const workers = (await user.listWorkersPage()).items;
    expectConforms(WorkerList, { workers });
    expectConforms(Worker, await user.getWorker(workers[0]?.id as string));
    expectConforms(Job, await user.cancelJob(job.id));
  });

  it('matches for the agent protocol: claim, heartbeat, logs, status, plan artifact, metadata', async () => {
    const { configuration } = await vineyardWithConfiguration(user, 'agentic');
    const agent = await server.agentClient(user, 'contract-agent');
    const job = await user.createJob({ job_type: 'PLAN', configuration_id: configuration.id });

    const claim = await agent.claimJob();
    expectConforms(ClaimResponse, claim);
    expect(claim?.job.id).toBe(job.id);
    expectConforms(HeartbeatResponse, await agent.heartbeat('1.0.0'));
    expectConforms(AgentJob, await agent.getJobForAgent(job.id));
    expectConforms(LogPostResponse, await agent.appendLog(job.id, 'planning\n', 'STDOUT'));
    const logs = await agent.readLogs(job.id);
    expect(logs.logs).toHaveLength(1);
    expectConforms(LogPage, logs);
    expectConforms(ArtifactResponse, await agent.uploadPlanArtifact(job.id, new TextEncoder().encode('plan')));
    const changes = {
      format_version: 1 as const,
      resource_changes: [
        {
          address: 'terraform_data.x',
          module_address: null,
          type: 'terraform_data',
          name: 'x',
          actions: ['create'],
          attributes: [
            { path: 'input', after: { sensitive: true as const } },
            { path: 'id', after: { unknown: true as const } },
          ],
          attributes_omitted: 0,
          unchanged_attributes: 0,
        },
      ],
      resource_changes_omitted: 0,
      output_changes: [],
      output_changes_omitted: 0,
      truncated: false,
    };
    expectConforms(ArtifactResponse, await agent.uploadPlanChanges(job.id, changes));
    expectConforms(AgentJob, await agent.reportStatus(job.id, { status: 'SUCCESS', execution_metadata: { n: 1 } }));
    expectConforms(PlanChangesResponse, await user.getPlanChanges(job.id));
    expectConforms(Worker, await agent.getWorkerForAgent(agent.workerId));
    expectConforms(Worker, await agent.updateWorkerMetadata(agent.workerId, { region: 'eu', tags: ['a', 1] }));
  });

  it('matches for the release endpoints', async () => {
    const ci = new TrellisClient({ baseUrl: server.url, auth: { kind: 'release', secret: RELEASE_SECRET } });
    expectConforms(Release, await ci.publishRelease({ version: '1.2.3', release_notes: 'notes' }));
    expectConforms(ReleaseList, { releases: (await user.listReleasesPage()).items });
  });
});
