/**
 * The fleet (issue 29) over HTTP on SQLite and Postgres: `GET /api/cli/configurations` filtered
 * by status, drift, the policy result of the latest plan, tag and last change, with `counts=true`,
 * paged through the `Link` header; the results come from real jobs an agent reports (a plan's
 * policy results, a drift check), so the lifecycle hook is what the list reads.
 */
import type { TrellisClient } from '@trellis/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  type AgentClient,
  INLINE_MAIN_TF,
  type RunningControlPlane,
  startControlPlane,
} from './support/controlPlane.js';
import { describeEachDialect } from './support/dialects.js';
import { rawExecute } from './support/rawRows.js';

const policy = (name: string, passed: boolean) => ({
  policy_id: `00000000-0000-4000-8000-${String(name.length).padStart(12, '0')}`,
  version: 1,
  name,
  enforcement: 'mandatory',
  passed,
  messages: passed ? [] : [`${name} failed`],
});

interface Answer {
  status: number;
  link: string | null;
  body: {
    configurations?: { name: string; policy: string; vineyard_name: string | null; tags: string[] }[];
    counts?: Record<string, unknown> & { total: number };
    code?: string;
  };
}

describeEachDialect('the fleet: GET /api/cli/configurations filters and counts (issue 29)', (dialect) => {
  let server: RunningControlPlane;
  let alice: TrellisClient;
  let agent: AgentClient;
  let token: string;
  let orgId: string;

  const get = async (path: string, bearer = token): Promise<Answer> => {
    const response = await fetch(path.startsWith('http') ? path : `${server.url}${path}`, {
      headers: { Authorization: `Bearer ${bearer}` },
    });
    return {
      status: response.status,
      link: response.headers.get('link'),
      body: (await response.json()) as Answer['body'],
    };
  };
  const names = async (query: string) =>
    ((await get(`/api/cli/configurations?${query}`)).body.configurations ?? []).map((vine) => vine.name);

  /** Queues a job of the vine (a PLAN, or a drift check) and reports it succeeded with `metadata`. */
  async function run(queue: () => Promise<{ id: string }>, metadata: Record<string, unknown>) {
    const job = await queue();
    const claimed = await agent.claimJob();
    expect(claimed?.job.id).toBe(job.id);
    if (claimed?.job.job_type === 'PLAN') {
      const bytes = new TextEncoder().encode('plan-bytes');
      await agent.uploadPlanArtifact(job.id, bytes, bytes.byteLength);
    }
    await agent.reportStatus(job.id, {
      status: 'SUCCESS',
      execution_metadata: { plan_summary: { add: 1, change: 0, destroy: 0 }, ...metadata },
    });
    return job;
  }

  async function tag(vineId: string, tags: string[]) {
    // Tags come from the Terraform Cloud protocol (issue 26); set here directly, as it stores them.
    const sql =
      dialect === 'postgres'
        ? 'UPDATE vines SET tags = $1::jsonb WHERE id = $2'
        : 'UPDATE vines SET tags = ? WHERE id = ?';
    await rawExecute(server.database, sql, [JSON.stringify(tags), vineId]);
  }

  beforeAll(async () => {
    server = await startControlPlane(dialect);
    alice = await server.userClient('alice@example.com');
    token = await server.accessToken('alice@example.com');
    agent = await server.agentClient(alice, 'fleet-agent');
    orgId = (await alice.createOrg(`fleet-${dialect}`)).id;
    const own = await alice.createVineyard('own-yard');
    const team = await alice.createVineyard('team-yard', { orgId });
    const source = { type: 'inline' as const, files: { 'main.tf': INLINE_MAIN_TF } };
    const web = await alice.createConfiguration({ name: 'web', vineyard_id: own.id, source });
    const api = await alice.createConfiguration({ name: 'api', vineyard_id: team.id, source });
    const db = await alice.createConfiguration({ name: 'db', vineyard_id: own.id, source });
    await tag(web.id, ['prod']);
    await tag(api.id, ['edge', 'prod']);
    // web: its plan failed a policy. db: its plan passed every policy and was deployed; then a drift check finds
    // drift, and its policy results (a drift check's) leave the vine's as they were.
    await run(() => alice.createJob({ job_type: 'PLAN', configuration_id: web.id }), {
      policy_results: [policy('tags', true), policy('no-deletes', false)],
    });
    const dbPlan = await run(() => alice.createJob({ job_type: 'PLAN', configuration_id: db.id }), {
      policy_results: [policy('tags', true)],
    });
    await run(() => alice.createJob({ job_type: 'DEPLOY', configuration_id: db.id, plan_job_id: dbPlan.id }), {});
    await run(() => alice.checkDrift('db'), { policy_results: [policy('tags', false)] });
  }, 120_000);
  afterAll(async () => {
    await server?.close();
  });

  it('lists every configuration the person may read, with its vineyard and policy result, and counts them', async () => {
    const all = await get('/api/cli/configurations?counts=true');
    expect(all.status).toBe(200);
    expect(all.body.configurations?.map((vine) => [vine.name, vine.vineyard_name, vine.policy])).toEqual([
      ['db', 'own-yard', 'passed'],
      ['api', 'team-yard', 'none'],
      ['web', 'own-yard', 'failed'],
    ]);
    expect(all.body.counts).toEqual({
      total: 3,
      status: { NEW: 1, PLANNING: 0, PLANNED: 1, DEPLOYING: 0, DEPLOYED: 1, DESTROYING: 0, DESTROYED: 0, FAILED: 0 },
      drift: { drifted: 1, in_sync: 0, unknown: 0, never_checked: 2 },
      policy: { passed: 1, failed: 1, none: 1 },
    });
    // Without counts=true the answer is the list as before.
    expect(Object.keys((await get('/api/cli/configurations')).body)).toEqual(['configurations']);
  });

  it('filters by status, drift, policy, tag, organization and last change', async () => {
    expect(await names('policy=failed')).toEqual(['web']);
    expect(await names('policy=none')).toEqual(['api']);
    expect(await names('drift=drifted')).toEqual(['db']);
    expect(await names('drift=never_checked')).toEqual(['api', 'web']);
    expect(await names('status=NEW')).toEqual(['api']);
    expect(await names('tag=prod')).toEqual(['api', 'web']);
    expect(await names('tag=PROD&status=PLANNED')).toEqual(['web']);
    expect(await names(`org_id=${orgId}`)).toEqual(['api']);
    expect(await names('org_id=personal&tag=prod')).toEqual(['web']);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    expect(await names(`changed_since=${tomorrow}`)).toEqual([]);
    expect(await names(`changed_before=${tomorrow}`)).toEqual(['db', 'api', 'web']);
    // Each dimension is counted under the other filters: what choosing it would list.
    const counts = (await get('/api/cli/configurations?tag=prod&policy=failed&counts=true')).body.counts;
    expect(counts).toMatchObject({
      total: 1,
      policy: { passed: 0, failed: 1, none: 1 },
      status: { PLANNED: 1, NEW: 0 },
    });
  });

  it('pages a filtered list with the Link header, which keeps the filter', async () => {
    const first = await get('/api/cli/configurations?tag=prod&limit=1');
    expect(first.body.configurations?.map((vine) => vine.name)).toEqual(['api']);
    expect(first.link).toMatch(/tag=prod/);
    const target = /^<([^>]*)>; rel="next"$/.exec(first.link ?? '')?.[1] as string;
    const second = await get(target);
    expect(second.body.configurations?.map((vine) => vine.name)).toEqual(['web']);
    expect(second.link).toBeNull();
  });

  it('refuses a filter it does not know (400 validation_failed) and shows nothing of another person', async () => {
    for (const query of ['drift=sideways', 'policy=maybe', 'changed_since=yesterday', 'tag=no%20spaces']) {
      const refused = await get(`/api/cli/configurations?${query}`);
      expect(refused.status, query).toBe(400);
      expect(refused.body.code, query).toBe('validation_failed');
    }
    const bob = await server.accessToken('bob@example.com');
    const theirs = await get('/api/cli/configurations?counts=true', bob);
    expect(theirs.body.configurations).toEqual([]);
    expect(theirs.body.counts?.total).toBe(0);
  });
});
