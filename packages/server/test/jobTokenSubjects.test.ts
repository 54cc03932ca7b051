/**
 * The `sub` of job tokens (issue 23) over HTTP on SQLite and Postgres, people signed in through the
 * GitHub sign-in against a stand-in on loopback, tokens verified with jose against the served JWKS:
 * an organization that takes a renamed organization's name, with vineyards and vines of the same
 * names, gets tokens no trust policy of the first one accepts (ids, never names); a speculative
 * plan (a drift check) is told apart from a deployable one in `sub` itself.
 */
import { TrellisClient } from '@trellis/client';
import { INLINE_MAIN_TF } from '@trellis/testkit';
import { createRemoteJWKSet, type JWTPayload, jwtVerify } from 'jose';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { type PeopleServer, startPeopleServer } from './support/people.js';

const ROLE = 'arn:aws:iam::123456789012:role/deploy';

describeEachDialect('job token subjects', (dialect) => {
  let people: PeopleServer;

  beforeAll(async () => {
    people = await startPeopleServer(dialect);
  }, 60_000);
  afterAll(() => people?.close());

  /** A vine `net` in a vineyard `prod` of a new organization `name`, with an AWS OIDC identity and an agent. */
  async function orgVine(owner: TrellisClient, name: string) {
    const org = await owner.createOrg(name);
    const vineyard = await owner.createVineyard('prod', { orgId: org.id });
    const vine = await owner.createConfiguration({
      name: 'net',
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': INLINE_MAIN_TF } },
      cloud_identity: { kind: 'oidc', provider: 'aws', role_arn: ROLE },
    });
    const pool = await owner.registerWorker({ name: 'pool', orgId: org.id });
    const agent = new TrellisClient({
      baseUrl: people.web,
      auth: { kind: 'worker', workerId: pool.worker_id, workerToken: pool.worker_token },
    });
    return { org, vineyard, vine, agent };
  }

  /** The verified claims of the token the agent's next claim carries. */
  async function nextToken(agent: TrellisClient): Promise<JWTPayload> {
    const claimed = await agent.claimJob();
    const token = claimed?.identity_token;
    if (!token) throw new Error('the claim carried no identity token');
    const { issuer } = (await (await fetch(`${people.web}/.well-known/openid-configuration`)).json()) as {
      issuer: string;
    };
    const jwks = createRemoteJWKSet(new URL(`${people.web}/.well-known/jwks.json`));
    const { payload } = await jwtVerify(token, jwks, { issuer, audience: 'sts.amazonaws.com' });
    await agent.reportStatus(claimed.job.id, { status: 'SUCCESS' });
    return payload;
  }

  it('gives an organization that takes a renamed one’s name, vineyard and vine names a different sub', async () => {
    const ada = await people.signIn('ada');
    const first = await orgVine(ada.client, `acme-${dialect}`);
    await ada.client.createJob({ job_type: 'DEPLOY', configuration_id: first.vine.id });
    const before = await nextToken(first.agent);
    expect(before.sub).toBe(`vineyard:${first.vineyard.id}:vine:${first.vine.id}:job_type:DEPLOY:run:standard`);
    expect(before).toMatchObject({
      trellis_owner_id: first.org.id,
      trellis_owner_name: `acme-${dialect}`,
      trellis_vineyard_name: 'prod',
      trellis_vine_name: 'net',
    });

    await ada.client.renameOrg(first.org.id, `acme-old-${dialect}`);
    const mallory = await people.signIn('mallory');
    const second = await orgVine(mallory.client, `acme-${dialect}`);
    await mallory.client.createJob({ job_type: 'DEPLOY', configuration_id: second.vine.id });
    const taken = await nextToken(second.agent);
    expect(taken).toMatchObject({
      trellis_owner_name: `acme-${dialect}`,
      trellis_vineyard_name: 'prod',
      trellis_vine_name: 'net',
    });
    // Same names, another sub: a trust policy written for the first organization does not match.
    expect(taken.sub).not.toBe(before.sub);
    expect(taken.sub).toBe(`vineyard:${second.vineyard.id}:vine:${second.vine.id}:job_type:DEPLOY:run:standard`);
    // The renamed organization's tokens keep their sub.
    await ada.client.createJob({ job_type: 'DEPLOY', configuration_id: first.vine.id });
    expect((await nextToken(first.agent)).sub).toBe(before.sub);
  });

  it('tells a speculative plan (a drift check) from a deployable one in sub', async () => {
    const bob = await people.signIn('bob');
    const { vineyard, vine, agent } = await orgVine(bob.client, `drift-${dialect}`);
    const ids = `vineyard:${vineyard.id}:vine:${vine.id}`;
    await bob.client.createJob({ job_type: 'PLAN', configuration_id: vine.id });
    const plan = await nextToken(agent);
    expect(plan).toMatchObject({ sub: `${ids}:job_type:PLAN:run:standard`, trellis_speculative: false });
    await bob.client.createJob({ job_type: 'DEPLOY', configuration_id: vine.id });
    expect((await nextToken(agent)).sub).toBe(`${ids}:job_type:DEPLOY:run:standard`);
    await bob.client.checkDrift(vine.id);
    const drift = await nextToken(agent);
    expect(drift).toMatchObject({ sub: `${ids}:job_type:PLAN:run:speculative`, trellis_speculative: true });
    expect(Buffer.byteLength(drift.sub as string)).toBeLessThanOrEqual(127);
  });
});
