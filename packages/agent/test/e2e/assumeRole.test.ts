/**
 * AssumeRole end to end, in one process because nock intercepts only in-process HTTP: the real
 * JobRunner (the class `trellis-agent run` uses), a real control plane, real OpenTofu, and STS
 * answered by nock with the recorded shape of its AssumeRole response.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TrellisClient } from '@trellis/client';
import nock from 'nock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RunningControlPlane, startControlPlane } from '@trellis/testkit/controlPlane';
import { stsAssumeRole } from '../../src/cloud/assumeRole.js';
import { JobRunner } from '../../src/job/JobRunner.js';
import { AgentLogger } from '../../src/logging/AgentLogger.js';
import { fixture, TOFU } from '../support/e2e.js';

const AWS_FIXTURES = fileURLToPath(new URL('../../../../test-fixtures/aws/', import.meta.url));
const STS_ENDPOINT = 'https://sts.trellis-test.example';
const ROLE_ARN = 'arn:aws:iam::123456789012:role/trellis-deployer';
const ASSUMED = {
  AWS_ACCESS_KEY_ID: 'ASIA3XFRBF53ASSUMED1',
  AWS_SECRET_ACCESS_KEY: 'Xb9qk2LrT0assumedSecretKeyForTrellisTests0',
  AWS_SESSION_TOKEN: 'IQoJb3JpZ2luX2VjEAssumedSessionTokenForTrellisTests/////////wEaCXVzLWVhc3QtMSJHMEUCIQ==',
};
const HOST = {
  AWS_ACCESS_KEY_ID: 'AKIAHOSTCREDENTIALS1',
  AWS_SECRET_ACCESS_KEY: 'host-secret-key-of-the-agent-machine',
};

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

describe.skipIf(!TOFU)('a job with a cloud identity', { timeout: 120_000 }, () => {
  let server: RunningControlPlane;
  let user: TrellisClient;
  const dir = mkdtempSync(join(tmpdir(), 'trellis-agent-sts-'));
  const saved = { ...process.env };

  beforeAll(async () => {
    server = await startControlPlane('sqlite');
    user = await server.userClient('cloud@example.com');
    Object.assign(process.env, HOST, { AWS_ENDPOINT_URL_STS: STS_ENDPOINT, AWS_REGION: 'eu-west-1' });
    nock.disableNetConnect();
    nock.enableNetConnect(/^(127\.0\.0\.1|localhost)(:\d+)?$/);
  });

  afterEach(() => nock.cleanAll());

  afterAll(async () => {
    nock.enableNetConnect();
    for (const key of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_ENDPOINT_URL_STS', 'AWS_REGION']) {
      if (saved[key] === undefined) delete process.env[key];
      else process.env[key] = saved[key];
    }
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function claimDeploy(name: string, reportPath: string) {
    const vineyard = await user.createVineyard(`${name}-yard`);
    const vine = await user.createConfiguration({
      name,
      vineyard_id: vineyard.id,
      source: fixture('aws-env'),
      variables: { report_path: reportPath },
      cloud_identity: { provider: 'aws', role_arn: ROLE_ARN },
    });
    const job = await user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id });
    const agent = await server.agentClient(user, `${name}-agent`);
    const claimed = await agent.claimJob();
    if (!claimed) throw new Error('nothing to claim');
    expect(claimed.job.id).toBe(job.id);
    const runner = new JobRunner(
      {
        client: agent,
        logger: new AgentLogger('silent'),
        assumeRole: stsAssumeRole(),
        settings: {
          serverUrl: server.url,
          workerId: agent.workerId,
          workerToken: agent.workerToken,
          workDir: dir,
          engineBin: TOFU as string,
          graceMs: 10_000,
          lockTimeoutS: 30,
          logIntervalMs: 200,
        },
      },
      claimed,
    );
    return { claimed, runner, vine };
  }

  async function storedLog(jobId: string): Promise<string> {
    return (await user.getJobLogs(jobId, { limit: 5000 })).logs.map((log) => log.log_chunk).join('');
  }

  it('assumes the role with its external id and a session named for the job; only the engine gets the credentials', async () => {
    const report = join(dir, 'aws-env.txt');
    const { claimed, runner, vine } = await claimDeploy('with-role', report);
    const sessionName = `trellis-job-${claimed.job.id}`;
    let request: URLSearchParams | null = null;
    let authorization = '';
    const sts = nock(STS_ENDPOINT)
      .post('/', (body) => {
        request = new URLSearchParams(body as string);
        return true;
      })
      .reply(function reply() {
        authorization = String(this.req.headers.authorization ?? '');
        const xml = readFileSync(join(AWS_FIXTURES, 'sts-assume-role-response.xml'), 'utf8');
        return [200, xml.replaceAll('{{SESSION_NAME}}', sessionName), { 'Content-Type': 'text/xml' }];
      });

    expect(await runner.run()).toBe('SUCCESS');
    expect(sts.isDone()).toBe(true);
    const sent = request as URLSearchParams | null;
    expect(sent?.get('Action')).toBe('AssumeRole');
    expect(sent?.get('RoleArn')).toBe(ROLE_ARN);
    expect(sent?.get('ExternalId')).toBe(vine.cloud_identity?.external_id);
    expect(sent?.get('RoleSessionName')).toBe(sessionName);
    // Signed with the host's own credentials.
    expect(authorization).toContain(`Credential=${HOST.AWS_ACCESS_KEY_ID}/`);

    const seen = Object.fromEntries(
      readFileSync(report, 'utf8')
        .trim()
        .split('\n')
        .map((line) => line.split('=') as [string, string]),
    );
    expect(seen).toEqual({
      AWS_ACCESS_KEY_ID: sha256(ASSUMED.AWS_ACCESS_KEY_ID),
      AWS_SECRET_ACCESS_KEY: sha256(ASSUMED.AWS_SECRET_ACCESS_KEY),
      AWS_SESSION_TOKEN: sha256(ASSUMED.AWS_SESSION_TOKEN),
    });

    const log = await storedLog(claimed.job.id);
    expect(log).toContain(`assumed ${ROLE_ARN}`);
    expect(log).toContain('engine runs with key ***');
    for (const value of [...Object.values(ASSUMED), ...Object.values(HOST)]) expect(log).not.toContain(value);
    expect((await user.getJob(claimed.job.id)).status).toBe('SUCCESS');
  });

  it('fails the job, before the engine runs, when STS refuses the role', async () => {
    const report = join(dir, 'refused.txt');
    const { claimed, runner, vine } = await claimDeploy('refused-role', report);
    nock(STS_ENDPOINT)
      .post('/')
      .reply(403, readFileSync(join(AWS_FIXTURES, 'sts-access-denied-response.xml'), 'utf8'), {
        'Content-Type': 'text/xml',
      });
    expect(await runner.run()).toBe('FAILED');
    const job = await user.getJob(claimed.job.id);
    expect(job.error_message).toMatch(
      /^could not assume the role arn:aws:iam::123456789012:role\/trellis-deployer: User: /,
    );
    expect((await user.getConfiguration(vine.id)).status).toBe('FAILED');
    expect(await storedLog(claimed.job.id)).not.toContain('$ tofu');
  });
});
