/**
 * Workload identity with a real relying party (issue 16): MinIO configured with this control plane
 * as its OpenID provider (discovery on loopback, a role policy) exchanges a job's token at its STS
 * (`AssumeRoleWithWebIdentity`) for credentials, and refuses a token of another audience or an
 * expired one. Then a real OpenTofu run by the agent's JobRunner whose `s3` backend authenticates
 * with `assume_role_with_web_identity` (the agent's token file, MinIO as the STS and S3 endpoints)
 * stores its state in a MinIO bucket.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { TrellisClient } from '@trellis/client';
import { type MinioServer, requirePeer, startMinio } from '@trellis/testkit';
import { type RunningControlPlane, startControlPlane } from '@trellis/testkit/controlPlane';
import { createRemoteJWKSet, decodeJwt, jwtVerify, SignJWT, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stsAssumeRole } from '../../src/cloud/assumeRole.js';
import { JobRunner } from '../../src/job/JobRunner.js';
import { AgentLogger } from '../../src/logging/AgentLogger.js';
import { type E2eServer, killLeftovers, logText, startAgent, TOFU, waitForJob } from '../support/e2e.js';

const MINIO = requirePeer('minio', 'workload identity against MinIO STS');
const CLIENT_ID = 'trellis-minio';
// What the vine names; MinIO's own role ARN goes in the backend block (below).
const AWS_ROLE = 'arn:aws:iam::123456789012:role/trellis-state';

/** MinIO's role ARN of a role-policy OpenID provider: the base64url SHA-1 of the client id. */
function minioRoleArn(): string {
  return `arn:minio:iam:::role/${createHash('sha1').update(CLIENT_ID).digest('base64url')}`;
}

async function assumeRoleWithWebIdentity(minio: MinioServer, token: string) {
  const response = await fetch(`${minio.endpoint}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      Action: 'AssumeRoleWithWebIdentity',
      Version: '2011-06-15',
      WebIdentityToken: token,
      RoleArn: minioRoleArn(),
      DurationSeconds: '900',
    }),
  });
  const xml = await response.text();
  const value = (name: string) => xml.match(new RegExp(`<${name}>([^<]*)</${name}>`))?.[1] ?? null;
  return {
    status: response.status,
    xml,
    accessKeyId: value('AccessKeyId'),
    secretAccessKey: value('SecretAccessKey'),
    sessionToken: value('SessionToken'),
  };
}

function s3BackendConfig(minio: MinioServer, bucket: string): string {
  return `
terraform {
  backend "s3" {
    bucket                      = "${bucket}"
    key                         = "network/terraform.tfstate"
    region                      = "${minio.region}"
    use_path_style              = true
    skip_credentials_validation = true
    skip_region_validation      = true
    skip_requesting_account_id  = true
    skip_metadata_api_check     = true
    skip_s3_checksum            = true
    endpoints = {
      s3  = "${minio.endpoint}"
      sts = "${minio.endpoint}"
    }
    # The token file and session name come from the agent (AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_SESSION_NAME).
    assume_role_with_web_identity = {
      role_arn = "${minioRoleArn()}"
    }
  }
}

resource "terraform_data" "marker" {
  input = "stored in MinIO"
}

output "marker" {
  value = terraform_data.marker.output
}
`;
}

describe.skipIf(!MINIO || !TOFU)('workload identity with MinIO as the relying party', { timeout: 180_000 }, () => {
  let server: RunningControlPlane;
  let minio: MinioServer;
  let user: TrellisClient;
  const dir = mkdtempSync(join(tmpdir(), 'trellis-agent-oidc-'));
  let clockOffsetMs = 0;

  beforeAll(async () => {
    server = await startControlPlane('sqlite', { clock: { now: () => new Date(Date.now() + clockOffsetMs) } });
    user = await server.userClient('oidc@example.com');
    // The control plane serves discovery before MinIO starts: MinIO reads it once, at start.
    minio = await startMinio(MINIO as string, {
      MINIO_IDENTITY_OPENID_CONFIG_URL: `${server.url}/.well-known/openid-configuration`,
      MINIO_IDENTITY_OPENID_CLIENT_ID: CLIENT_ID,
      MINIO_IDENTITY_OPENID_ROLE_POLICY: 'readwrite',
    });
  });

  afterAll(async () => {
    await minio?.stop();
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function claimOidcJob(
    name: string,
    source: { type: 'inline'; files: Record<string, string> },
    audience = CLIENT_ID,
  ) {
    const vineyard = await user.createVineyard(`${name}-yard`);
    const vine = await user.createConfiguration({
      name,
      vineyard_id: vineyard.id,
      source,
      cloud_identity: { kind: 'oidc', provider: 'aws', role_arn: AWS_ROLE, audience },
    });
    await user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id });
    const agent = await server.agentClient(user, `${name}-agent`);
    const claimed = await agent.claimJob();
    if (!claimed) throw new Error('nothing to claim');
    return { agent, claimed, vine };
  }

  it('serves a JWKS that verifies the job token (jose, over HTTP)', async () => {
    const { claimed, vine } = await claimOidcJob('verify', { type: 'inline', files: { 'main.tf': '' } });
    const token = claimed.identity_token as string;
    const discovery = (await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()) as {
      issuer: string;
      jwks_uri: string;
    };
    const jwks = createRemoteJWKSet(new URL(`${server.url}/.well-known/jwks.json`));
    const { payload } = await jwtVerify(token, jwks, { issuer: discovery.issuer, audience: CLIENT_ID });
    expect(payload).toMatchObject({
      // Issue 23: ids, never names, and whether the run is speculative.
      sub: `vineyard:${vine.vineyard_id}:vine:${vine.id}:job_type:DEPLOY:run:standard`,
      trellis_vine_name: 'verify',
      trellis_vineyard_name: 'verify-yard',
      trellis_job_id: claimed.job.id,
      trellis_job_type: 'DEPLOY',
      trellis_speculative: false,
    });
    expect(claimed.cloud_identity).toEqual({
      kind: 'oidc',
      provider: 'aws',
      role_arn: AWS_ROLE,
      audience: CLIENT_ID,
      session_duration: null,
    });
  });

  it('MinIO exchanges a job token for credentials that work on its S3 API', async () => {
    const { claimed } = await claimOidcJob('exchange', { type: 'inline', files: { 'main.tf': '' } });
    const answer = await assumeRoleWithWebIdentity(minio, claimed.identity_token as string);
    expect(answer.status, answer.xml).toBe(200);
    expect(answer.accessKeyId).toBeTruthy();
    const bucket = await minio.createBucket();
    const s3 = new S3Client({
      endpoint: minio.endpoint,
      region: minio.region,
      forcePathStyle: true,
      credentials: {
        accessKeyId: answer.accessKeyId as string,
        secretAccessKey: answer.secretAccessKey as string,
        sessionToken: answer.sessionToken as string,
      },
    });
    try {
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'hello.txt', Body: 'hi' }));
      const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'hello.txt' }));
      expect(await got.Body?.transformToString()).toBe('hi');
    } finally {
      s3.destroy();
    }
  });

  it('MinIO refuses a token of another audience', async () => {
    const { claimed } = await claimOidcJob(
      'other-audience',
      { type: 'inline', files: { 'main.tf': '' } },
      'sts.amazonaws.com',
    );
    expect(decodeJwt(claimed.identity_token as string).aud).toBe('sts.amazonaws.com');
    const answer = await assumeRoleWithWebIdentity(minio, claimed.identity_token as string);
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.accessKeyId).toBeNull();
  });

  it('MinIO refuses an expired token, and one signed by a key the JWKS does not serve', async () => {
    // The control plane's clock two hours behind while it mints: its one-hour token expired an hour ago.
    clockOffsetMs = -2 * 3600 * 1000;
    let claim: Awaited<ReturnType<typeof claimOidcJob>>;
    try {
      claim = await claimOidcJob('expired', { type: 'inline', files: { 'main.tf': '' } });
    } finally {
      clockOffsetMs = 0;
    }
    const expired = claim.claimed.identity_token as string;
    const fresh = decodeJwt(expired);
    expect((fresh.exp as number) * 1000).toBeLessThan(Date.now() - 3000 * 1000);
    const answer = await assumeRoleWithWebIdentity(minio, expired);
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.accessKeyId).toBeNull();
    // And a well-formed token signed by a key the JWKS does not serve.
    const { privateKey } = await generateKeyPair('RS256');
    const forged = await new SignJWT({ ...fresh }).setProtectedHeader({ alg: 'RS256', kid: 'forged' }).sign(privateKey);
    expect((await assumeRoleWithWebIdentity(minio, forged)).accessKeyId).toBeNull();
  });

  it('an OpenTofu run whose s3 backend assumes the role with the job token keeps its state in MinIO', async () => {
    const bucket = await minio.createBucket();
    const mainTf = s3BackendConfig(minio, bucket);
    const { agent, claimed } = await claimOidcJob('tofu-s3', { type: 'inline', files: { 'main.tf': mainTf } });
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
          // No AWS credentials of the host: only the job token can reach MinIO.
          hostEnv: { PATH: process.env.PATH, HOME: process.env.HOME },
        },
      },
      claimed,
    );
    const outcome = await runner.run();
    const log = (await user.getJobLogs(claimed.job.id, { limit: 5000 })).logs.map((entry) => entry.log_chunk).join('');
    expect(outcome, log).toBe('SUCCESS');
    expect(log).not.toContain(claimed.identity_token as string);
    expect(log).toContain("OIDC federation with the job's identity token");
    expect(await minio.listObjects(bucket)).toEqual(['network/terraform.tfstate']);
    // The workspace, token file included, is gone.
    expect(readdirSync(dir)).toEqual([]);
  });

  it('the trellis-agent process runs the same OpenTofu configuration with no cloud keys of its own', async () => {
    const bucket = await minio.createBucket();
    const vineyard = await user.createVineyard('binary-yard');
    const vine = await user.createConfiguration({
      name: 'binary',
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': s3BackendConfig(minio, bucket) } },
      cloud_identity: { kind: 'oidc', provider: 'aws', role_arn: AWS_ROLE, audience: CLIENT_ID },
    });
    const job = await user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id });
    const e2e = { url: server.url, user } as unknown as E2eServer;
    // Host AWS keys that would be refused by MinIO: the agent must drop them for the job's token.
    const agent = await startAgent(e2e, {
      name: 'binary-agent',
      env: { AWS_ACCESS_KEY_ID: 'AKIAWRONGHOSTKEY0000', AWS_SECRET_ACCESS_KEY: 'wrong-host-secret' },
    });
    try {
      const done = await waitForJob(e2e, job.id);
      const log = await logText(e2e, job.id);
      expect(done.status, `${log}\n${agent.output()}`).toBe('SUCCESS');
      expect(await minio.listObjects(bucket)).toEqual(['network/terraform.tfstate']);
      expect(log).not.toContain('AKIAWRONGHOSTKEY0000');
    } finally {
      await agent.stop();
      killLeftovers();
    }
  });
});
