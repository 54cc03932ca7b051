import type { VineView } from '@trellis/core';
import {
  createTestCore,
  pullRequestTrigger,
  queueGitJob,
  seedUser,
  seedVine,
  seedWorker,
  type TestCore,
  type TestUser,
  type TestWorker,
} from '@trellis/testkit/memory';
import { createLocalJWKSet, decodeProtectedHeader, type JSONWebKeySet, jwtVerify } from 'jose';
import { beforeEach, describe, expect, it } from 'vitest';

const ISSUER = 'https://trellis.example.test';
const ROLE = 'arn:aws:iam::123456789012:role/deployer';
const GCP_PROVIDER = 'projects/123456/locations/global/workloadIdentityPools/trellis/providers/trellis';

let core: TestCore;
let ada: TestUser;
let worker: TestWorker;

function setup(settings: Partial<TestCore['settings']['workloadIdentity']> = {}) {
  core = createTestCore({
    now: '2026-03-01T10:00:00.000Z',
    settings: {
      workloadIdentity: {
        issuer: ISSUER,
        algorithm: 'RS256',
        tokenLifetimeSeconds: 3600,
        keyRotationSeconds: 0,
        ...settings,
      },
    },
  });
}

beforeEach(async () => {
  setup();
  ada = await seedUser(core, { email: 'ada@example.test' });
  worker = await seedWorker(core, ada, { heartbeat: true });
});

async function oidcVine(identity: Record<string, unknown> = { kind: 'oidc', role_arn: ROLE }): Promise<VineView> {
  const vineyard = await core.useCases.vineyards.create(ada, { name: 'production' });
  return seedVine(core, ada, { name: 'network', vineyard_id: vineyard.id, cloud_identity: identity });
}

async function claimToken(vine: VineView, jobType = 'PLAN'): Promise<string> {
  await core.useCases.jobs.create(ada, { job_type: jobType, configuration_id: vine.id });
  const claimed = await core.useCases.jobs.claim(worker);
  expect(claimed?.identity_token).toEqual(expect.any(String));
  return claimed?.identity_token as string;
}

async function verify(token: string, audience: string) {
  const jwks = createLocalJWKSet((await core.useCases.workloadIdentity.jwks()) as JSONWebKeySet);
  return jwtVerify(token, jwks, { issuer: ISSUER, audience, currentDate: core.clock.now() });
}

describe('the OIDC issuer', () => {
  it('publishes a discovery document naming the JWKS and the claims', () => {
    expect(core.useCases.workloadIdentity.discovery()).toMatchObject({
      issuer: ISSUER,
      jwks_uri: `${ISSUER}/.well-known/jwks.json`,
      id_token_signing_alg_values_supported: ['RS256', 'ES256'],
      claims_supported: expect.arrayContaining(['sub', 'aud', 'trellis_job_type', 'trellis_speculative']),
    });
  });

  it('serves one RS256 public key, and never the private parts', async () => {
    const { keys } = await core.useCases.workloadIdentity.jwks();
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', kid: expect.any(String) });
    expect(keys[0]).not.toHaveProperty('d');
    expect(keys[0]).not.toHaveProperty('p');
  });

  it('keeps the private key sealed at rest', async () => {
    await core.useCases.workloadIdentity.ensureKey();
    const [stored] = [...core.uow.snapshot().signingKeys.values()];
    expect(stored?.private_key_sealed).toMatch(/^v1\./);
    expect(stored?.private_key_sealed).not.toContain('PRIVATE KEY');
    expect(await core.secrets.open(stored!.private_key_sealed, `signing-key:${stored!.id}`)).toContain('PRIVATE KEY');
  });

  it('signs ES256 when so configured', async () => {
    setup({ algorithm: 'ES256' });
    ada = await seedUser(core, { email: 'ada@example.test' });
    worker = await seedWorker(core, ada, { heartbeat: true });
    const token = await claimToken(await oidcVine());
    expect(decodeProtectedHeader(token).alg).toBe('ES256');
    const { keys } = await core.useCases.workloadIdentity.jwks();
    expect(keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256' });
    await verify(token, 'sts.amazonaws.com');
  });
});

describe('job tokens', () => {
  it.each(['PLAN', 'DEPLOY', 'DESTROY'])(
    'a %s job of an AWS OIDC vine gets a token with every claim',
    async (jobType) => {
      const vine = await oidcVine();
      const token = await claimToken(vine, jobType);
      const job = [...core.uow.snapshot().jobs.values()][0]!;
      const { payload, protectedHeader } = await verify(token, 'sts.amazonaws.com');
      const now = Math.floor(core.clock.now().getTime() / 1000);
      expect(protectedHeader).toMatchObject({ alg: 'RS256', typ: 'JWT', kid: expect.any(String) });
      expect(payload).toEqual({
        iss: ISSUER,
        aud: 'sts.amazonaws.com',
        // Issue 23: ids, never names; and whether the run is speculative.
        sub: `vineyard:${vine.vineyard_id}:vine:${vine.id}:job_type:${jobType}:run:standard`,
        jti: expect.stringMatching(/^[0-9a-f-]{36}$/),
        iat: now,
        nbf: now,
        exp: now + 3600,
        trellis_job_id: job.id,
        trellis_job_type: jobType,
        trellis_vine_id: vine.id,
        trellis_vineyard_id: vine.vineyard_id,
        trellis_owner_id: ada.userId,
        trellis_vine_name: 'network',
        trellis_vineyard_name: 'production',
        trellis_owner_name: 'ada@example.test',
        trellis_speculative: false,
      });
    },
  );

  it('a git-triggered job names its repository, ref and commit; a pull request is speculative', async () => {
    const vine = await oidcVine();
    const sha = 'a'.repeat(40);
    await queueGitJob(core.uow, core.deps, {
      ownerId: ada.userId,
      vineId: vine.id,
      trigger: {
        type: 'push',
        provider: 'github',
        repository: 'acme/infra',
        branch: 'main',
        commit_sha: sha,
        commit_message: 'More subnets',
        author: 'ada',
      },
    });
    const pushed = await core.useCases.jobs.claim(worker);
    const { payload: push } = await verify(pushed!.identity_token!, 'sts.amazonaws.com');
    expect(push).toMatchObject({
      repository: 'acme/infra',
      ref: 'refs/heads/main',
      commit_sha: sha,
      sub: `vineyard:${vine.vineyard_id}:vine:${vine.id}:job_type:PLAN:run:standard`,
      trellis_speculative: false,
    });
    await core.useCases.jobs.reportStatus(worker, pushed!.job.id, { status: 'SUCCESS' });

    // A fork's branch named `main` is still the pull request's ref, never refs/heads/main.
    await queueGitJob(core.uow, core.deps, {
      ownerId: ada.userId,
      vineId: vine.id,
      trigger: pullRequestTrigger('b'.repeat(40), { head_branch: 'main' }),
    });
    const proposed = await core.useCases.jobs.claim(worker);
    const { payload: pr } = await verify(proposed!.identity_token!, 'sts.amazonaws.com');
    expect(pr).toMatchObject({
      repository: 'acme/infra',
      ref: 'refs/pull/7/head',
      commit_sha: 'b'.repeat(40),
      sub: `vineyard:${vine.vineyard_id}:vine:${vine.id}:job_type:PLAN:run:speculative`,
      trellis_speculative: true,
    });
  });

  it('names an organization by its id in sub, and by its name in trellis_owner_name', async () => {
    const org = await core.useCases.orgs.create(ada, { name: 'acme' });
    const vineyard = await core.useCases.vineyards.create(ada, { name: 'prod', org_id: org.id });
    const vine = await seedVine(core, ada, {
      name: 'db',
      vineyard_id: vineyard.id,
      cloud_identity: { kind: 'oidc', role_arn: ROLE },
    });
    const registration = await core.useCases.workers.register(ada, { name: 'org-agent', org_id: org.id });
    const agent = await core.useCases.workers.authenticate(registration.worker_id, registration.worker_token);
    await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
    const claimed = await core.useCases.jobs.claim(agent);
    const { payload } = await verify(claimed!.identity_token!, 'sts.amazonaws.com');
    expect(payload.sub).toBe(`vineyard:${vineyard.id}:vine:${vine.id}:job_type:PLAN:run:standard`);
    expect(Buffer.byteLength(payload.sub as string)).toBeLessThanOrEqual(127);
    expect(payload).toMatchObject({
      trellis_owner_id: org.id,
      trellis_owner_name: 'acme',
      trellis_vineyard_name: 'prod',
      trellis_vine_name: 'db',
    });
  });

  it('uses the identity audience, and each cloud its default', async () => {
    const custom = await claimToken(await oidcVine({ kind: 'oidc', role_arn: ROLE, audience: 'minio' }));
    expect((await verify(custom, 'minio')).payload.aud).toBe('minio');
    await expect(verify(custom, 'sts.amazonaws.com')).rejects.toThrow(/aud/);

    const gcp = await seedVine(core, ada, {
      cloud_identity: { kind: 'oidc', provider: 'gcp', workload_identity_provider: GCP_PROVIDER },
    });
    const gcpToken = await claimToken(gcp);
    await verify(gcpToken, `https://iam.googleapis.com/${GCP_PROVIDER}`);

    const azure = await seedVine(core, ada, {
      cloud_identity: {
        kind: 'oidc',
        provider: 'azure',
        tenant_id: '11111111-2222-4333-8444-555555555555',
        client_id: '66666666-7777-4888-8999-aaaaaaaaaaaa',
      },
    });
    await verify(await claimToken(azure), 'api://AzureADTokenExchange');
  });

  it('lives as long as the configured job limit, and no longer', async () => {
    setup({ tokenLifetimeSeconds: 7200 });
    ada = await seedUser(core, { email: 'ada@example.test' });
    worker = await seedWorker(core, ada, { heartbeat: true });
    const token = await claimToken(await oidcVine());
    const { payload } = await verify(token, 'sts.amazonaws.com');
    expect(payload.exp! - payload.iat!).toBe(7200);
    core.clock.advance({ seconds: 7201 });
    await expect(verify(token, 'sts.amazonaws.com')).rejects.toThrow(/exp/);
  });

  it('is absent for a vine with an assumed role or no cloud identity', async () => {
    const assumed = await seedVine(core, ada, { cloud_identity: { role_arn: ROLE } });
    await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: assumed.id });
    const claimed = await core.useCases.jobs.claim(worker);
    expect(claimed?.cloud_identity).toMatchObject({ kind: 'assume_role' });
    expect(claimed?.identity_token).toBeNull();
    const plain = await seedVine(core, ada);
    await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: plain.id });
    const second = await core.useCases.jobs.claim(worker);
    expect(second?.cloud_identity).toBeNull();
    expect(second?.identity_token).toBeNull();
  });

  it('refuses malformed OIDC settings', async () => {
    for (const identity of [
      { kind: 'oidc', role_arn: 'not-an-arn' },
      { kind: 'oidc', provider: 'gcp', workload_identity_provider: 'pool' },
      { kind: 'oidc', provider: 'azure', tenant_id: 'x', client_id: 'y' },
      { kind: 'oidc', role_arn: ROLE, session_duration: 60 },
      { kind: 'federated', role_arn: ROLE },
    ]) {
      await expect(seedVine(core, ada, { cloud_identity: identity })).rejects.toMatchObject({
        code: 'validation_failed',
      });
    }
  });
});

describe('key rotation', () => {
  it('serves the previous key until every token it signed has expired', async () => {
    const vine = await oidcVine();
    const before = await claimToken(vine);
    const oldKid = decodeProtectedHeader(before).kid;
    const rotated = await core.useCases.workloadIdentity.rotate();
    expect(rotated).toMatchObject({ retired: 1, algorithm: 'RS256' });
    expect(rotated.kid).not.toBe(oldKid);

    const kids = (await core.useCases.workloadIdentity.jwks()).keys.map((key) => key.kid);
    expect(kids).toEqual([rotated.kid, oldKid]);
    await verify(before, 'sts.amazonaws.com');
    const other = await seedVine(core, ada, { cloud_identity: { kind: 'oidc', role_arn: ROLE } });
    const after = await claimToken(other);
    expect(decodeProtectedHeader(after).kid).toBe(rotated.kid);

    // 12 hours (the longest a token lives) and the clock skew margin later, the old key is gone.
    core.clock.advance({ seconds: 12 * 3600 + 301 });
    expect((await core.useCases.workloadIdentity.jwks()).keys.map((key) => key.kid)).toEqual([rotated.kid]);
  });

  it('rotates by itself once the key is older than the interval', async () => {
    setup({ keyRotationSeconds: 86_400 });
    const first = await core.useCases.workloadIdentity.ensureKey();
    core.clock.advance({ seconds: 3600 });
    expect((await core.useCases.workloadIdentity.ensureKey()).id).toBe(first.id);
    core.clock.advance({ seconds: 86_400 });
    const second = await core.useCases.workloadIdentity.ensureKey();
    expect(second.id).not.toBe(first.id);
    expect((await core.useCases.workloadIdentity.jwks()).keys.map((key) => key.kid)).toEqual([second.id, first.id]);
  });
});

describe('when the token cannot be issued', () => {
  it('fails the claimed job instead of leaving it PROCESSING for an agent that never heard of it', async () => {
    const vine = await oidcVine();
    const job = await core.useCases.jobs.create(ada, { job_type: 'PLAN', configuration_id: vine.id });
    core.deps.jws.sign = async () => {
      throw new Error('signer down');
    };
    await expect(core.useCases.jobs.claim(worker)).rejects.toThrow('signer down');
    expect(core.uow.snapshot().jobs.get(job.id)).toMatchObject({
      status: 'FAILED',
      error_message: 'the control plane could not issue the job its identity token',
    });
    expect(core.uow.snapshot().vines.get(vine.id)?.status).toBe('FAILED');
  });
});
