/**
 * A run's phases through the Terraform Cloud protocol (issue 27), over HTTP on loopback through the
 * real server composition on SQLite and Postgres. PLAN and DEPLOY jobs are made the way Trellis
 * makes them (queued through the API, claimed and reported by an agent of the organization's
 * pool, their logs posted by it): a run is its PLAN job (`run-`, `plan-`, `apply-`, `polchk-` +
 * the plan job id). Checked: the plan's and the apply's status and counts; their signed
 * `log-read-url`, read by byte offset as go-tfe's log reader does (STX at byte 0, ETX once the job
 * is over), across chunk boundaries and multibyte characters, as the log grows; a tampered,
 * re-aimed or expired URL refused; policy checks of OPA results with their output, and the
 * override that only an admin may make; run events; the organization's run queue and capacity.
 */
import { TrellisClient } from '@trellis/client';
import { FakeClock, joinOrg } from '@trellis/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { INLINE_MAIN_TF, type RunningControlPlane, startControlPlane } from '../support/controlPlane.js';
import { describeEachDialect } from '../support/dialects.js';

const STX = 0x02;
const ETX = 0x03;

const FAILED_MANDATORY = {
  policy_id: '00000000-0000-4000-8000-00000000b001',
  version: 2,
  name: 'no-public-buckets',
  enforcement: 'mandatory',
  passed: false,
  messages: ['aws_s3_bucket.logs must not be public'],
};
const FAILED_ADVISORY = {
  policy_id: '00000000-0000-4000-8000-00000000b002',
  version: 1,
  name: 'small-instances',
  enforcement: 'advisory',
  passed: false,
  messages: ['aws_instance.big is larger than t3.large'],
};
const PASSED = { ...FAILED_MANDATORY, passed: true, messages: [] };

/** Chunks of the log, with multibyte characters (2, 3 and 4 bytes in UTF-8) across their ends. */
const CHUNKS: Array<[string, 'STDOUT' | 'STDERR' | 'SYSTEM']> = [
  ['trellis-agent runs PLAN\n', 'SYSTEM'],
  ['Plan: héllo wörld → ', 'STDOUT'],
  ['✓ 🌱 done\n', 'STDOUT'],
  ['Warning: ünïcödé on stderr\n', 'STDERR'],
  ['€', 'STDOUT'],
  ['€€\n', 'STDOUT'],
];
const MORE: Array<[string, 'STDOUT' | 'STDERR' | 'SYSTEM']> = [
  ['later: 😀 grows\n', 'STDOUT'],
  ['plan: 2 to add, 1 to change, 0 to destroy\n', 'SYSTEM'],
];
const text = (chunks: typeof CHUNKS) => chunks.map(([chunk]) => chunk).join('');

describeEachDialect('a run through the Terraform Cloud protocol: phases, logs, policy checks', (dialect) => {
  const clock = new FakeClock(new Date());
  let plane: RunningControlPlane;
  let ada: TrellisClient; // owner
  let bob: TrellisClient; // operator
  let cy: TrellisClient; // admin
  let agent: TrellisClient;
  let tokens: Record<'ada' | 'bob' | 'cy' | 'stranger', string>;
  let orgId: string;
  let vineyardId: string;

  beforeAll(async () => {
    plane = await startControlPlane(dialect, { clock, env: { TRELLIS_LOST_JOB_TIMEOUT_S: '86400' } });
    ada = await plane.userClient('ada@example.test');
    bob = await plane.userClient('bob@example.test');
    cy = await plane.userClient('cy@example.test');
    tokens = {
      ada: await plane.accessToken('ada@example.test'),
      bob: await plane.accessToken('bob@example.test'),
      cy: await plane.accessToken('cy@example.test'),
      stranger: await plane.accessToken('sam@example.test'),
    };
    orgId = (await ada.createOrg('acme')).id;
    await joinOrg(ada, bob, orgId, 'bob@example.test', 'operator');
    await joinOrg(ada, cy, orgId, 'cy@example.test', 'admin');
    vineyardId = (await ada.createVineyard('prod', { orgId })).id;
    const { worker_id, worker_token } = await ada.registerWorker({ name: 'pool', orgId });
    agent = new TrellisClient({
      baseUrl: plane.url,
      auth: { kind: 'worker', workerId: worker_id, workerToken: worker_token },
    });
  }, 60_000);
  afterAll(async () => {
    await plane?.close();
  });

  async function api(who: keyof typeof tokens, method: string, path: string) {
    const response = await fetch(`${plane.url}/api/v2${path}`, {
      method,
      headers: { authorization: `Bearer ${tokens[who]}`, accept: 'application/vnd.api+json' },
    });
    // biome-ignore lint/suspicious/noExplicitAny: JSON:API documents are read loosely by the assertions
    const body = (await response.json()) as { data: any; errors?: Array<{ code: string }>; meta?: any };
    return { status: response.status, body };
  }

  async function newVine(name: string) {
    return ada.createConfiguration({
      name,
      vineyard_id: vineyardId,
      source: { type: 'inline', files: { 'main.tf': INLINE_MAIN_TF } },
    });
  }

  /** A PLAN queued by bob and claimed by the pool's agent (still running). */
  async function runningPlan(vineId: string) {
    clock.advance({ seconds: 1 });
    const job = await bob.createJob({ job_type: 'PLAN', configuration_id: vineId });
    clock.advance({ seconds: 1 });
    const claimed = await agent.claimJob();
    expect(claimed?.job.id).toBe(job.id);
    return job;
  }

  async function succeed(jobId: string, metadata: Record<string, unknown> = {}, plan = true) {
    clock.advance({ seconds: 1 });
    if (plan) {
      const bytes = new TextEncoder().encode('plan-bytes');
      await agent.uploadPlanArtifact(jobId, bytes, bytes.byteLength);
    }
    await agent.reportStatus(jobId, { status: 'SUCCESS', execution_metadata: metadata });
  }

  async function post(jobId: string, chunks: typeof CHUNKS) {
    for (const [chunk, stream] of chunks) await agent.appendLog(jobId, chunk, stream);
  }

  /** Reads the log URL as go-tfe does: `limit` and `offset` replace the query. */
  async function readLog(url: string, offset: number, limit: number) {
    const response = await fetch(`${url}?limit=${limit}&offset=${offset}`);
    return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()) };
  }

  /** Reads the whole log `step` bytes at a time, as far as it goes now. */
  async function readAll(url: string, step: number, from = 0): Promise<Buffer> {
    const parts: Buffer[] = [];
    let offset = from;
    for (;;) {
      const { status, bytes } = await readLog(url, offset, step);
      expect(status).toBe(200);
      if (bytes.length === 0) break;
      expect(bytes.length).toBeLessThanOrEqual(step);
      parts.push(bytes);
      offset += bytes.length;
      if (bytes.at(-1) === ETX) break;
    }
    return Buffer.concat(parts);
  }

  const framed = (log: string, over: boolean) =>
    Buffer.concat([Buffer.of(STX), Buffer.from(log, 'utf8'), ...(over ? [Buffer.of(ETX)] : [])]);

  it('serves the plan and its log by byte offset: STX first, every stream, ETX once the job is over', async () => {
    const vine = await newVine('logs');
    const job = await runningPlan(vine.id);
    await post(job.id, CHUNKS);
    const running = await api('bob', 'GET', `/plans/plan-${job.id}`);
    expect(running.status).toBe(200);
    expect(running.body.data).toMatchObject({
      type: 'plans',
      id: `plan-${job.id}`,
      attributes: { status: 'running', 'has-changes': false },
    });
    const url: string = running.body.data.attributes['log-read-url'];
    expect(url.startsWith(`${plane.url}/_signed/logs/plan/${job.id}/`)).toBe(true);
    expect(url).not.toContain('?');

    // In one read, and in reads of every small size (cutting chunks and characters anywhere).
    expect((await readLog(url, 0, 65_536)).bytes).toEqual(framed(text(CHUNKS), false));
    for (const step of [1, 2, 3, 5, 7]) expect(await readAll(url, step)).toEqual(framed(text(CHUNKS), false));
    const whole = framed(text(CHUNKS), false);
    for (const offset of [1, 7, 26, 27, 28, 30, 45, whole.length - 2]) {
      expect((await readLog(url, offset, 4)).bytes).toEqual(whole.subarray(offset, offset + 4));
    }
    expect((await readLog(url, whole.length, 100)).bytes.length).toBe(0);

    // The log grows: the reader picks up from where it was; then the job ends and ETX follows.
    await post(job.id, MORE);
    expect(await readAll(url, 6, whole.length)).toEqual(
      framed(text([...CHUNKS, ...MORE]), false).subarray(whole.length),
    );
    await succeed(job.id, { plan_summary: { add: 2, change: 1, destroy: 0 } });
    const complete = framed(text([...CHUNKS, ...MORE]), true);
    expect((await readLog(url, complete.length - 1, 100)).bytes).toEqual(Buffer.of(ETX));
    expect(await readAll(url, 9)).toEqual(complete);
    expect((await readLog(url, 0, 1_048_576)).bytes).toEqual(complete);
    expect((await readLog(url, 0, 0)).bytes.length).toBe(0);
    expect((await readLog(url, complete.length, 100)).bytes.length).toBe(0);
    expect((await readLog(url, complete.length + 50, 100)).bytes.length).toBe(0);
    expect((await readLog(url, 0, 1_048_577)).status).toBe(400);

    const finished = await api('bob', 'GET', `/plans/plan-${job.id}`);
    expect(finished.body.data.attributes).toMatchObject({
      status: 'finished',
      'has-changes': true,
      'resource-additions': 2,
      'resource-changes': 1,
      'resource-destructions': 0,
    });
    expect(Object.keys(finished.body.data.attributes['status-timestamps']).sort()).toEqual([
      'finished-at',
      'queued-at',
      'started-at',
    ]);
  });

  it('reads a log of thousands of chunks by any offset, cold and once indexed, a page of chunks at a time', async () => {
    const vine = await newVine('long');
    const job = await runningPlan(vine.id);
    const lines = Array.from({ length: 2500 }, (_, i) => `line ${i}: ✓ é 🌱${i % 7 === 0 ? '\n' : ' '}`);
    for (let from = 0; from < lines.length; from += 1000) {
      const batch = lines.slice(from, from + 1000).map((log_chunk, i) => ({
        seq: from + i + 1,
        log_chunk,
        stream_type: 'STDOUT' as const,
      }));
      await agent.appendLogBatch(job.id, batch);
    }
    await succeed(job.id);
    const url: string = (await api('bob', 'GET', `/plans/plan-${job.id}`)).body.data.attributes['log-read-url'];
    const whole = framed(lines.join(''), true);
    // Cold, from the middle: what comes before is indexed on the way.
    const middle = Math.floor(whole.length / 2) + 1;
    expect((await readLog(url, middle, 100)).bytes).toEqual(whole.subarray(middle, middle + 100));
    expect(await readAll(url, 65_536)).toEqual(whole);
    // Indexed: reads spanning more than a page of chunks, from anywhere.
    expect(whole.length).toBeLessThan(65_536); // so a read from the start spans every chunk: three pages
    for (const offset of [0, 1, 2, 17, 3000, middle, whole.length - 3]) {
      expect((await readLog(url, offset, 65_536)).bytes).toEqual(whole.subarray(offset, offset + 65_536));
    }
  });

  it('refuses a bad offset or limit, a tampered or re-aimed URL, and an expired one once the phase is over', async () => {
    const vine = await newVine('signed');
    const job = await runningPlan(vine.id);
    await post(job.id, CHUNKS.slice(0, 2));
    const url: string = (await api('bob', 'GET', `/plans/plan-${job.id}`)).body.data.attributes['log-read-url'];
    const bad = await fetch(`${url}?offset=-1&limit=10`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { errors: Array<{ code: string }> }).errors[0]?.code).toBe('validation_failed');

    const [token, signature] = url.split('/').slice(-2) as [string, string];
    const flipped = signature.startsWith('A') ? `B${signature.slice(1)}` : `A${signature.slice(1)}`;
    const refused = async (target: string) => {
      const response = await fetch(`${target}?offset=0&limit=10`);
      const body = (await response.json()) as { errors: Array<{ code: string }> };
      return `${response.status} ${body.errors[0]?.code}`;
    };
    expect(await refused(url.replace(signature, flipped))).toBe('401 invalid_signed_url');
    expect(await refused(url.replace(`/plan/${job.id}/`, `/apply/${job.id}/`))).toBe('401 invalid_signed_url');
    const other = await runningPlan((await newVine('other')).id);
    expect(await refused(url.replace(job.id, other.id))).toBe('401 invalid_signed_url');
    expect(await refused(`${plane.url}/_signed/logs/plan/${job.id}/${token}x/${signature}`)).toBe(
      '401 invalid_signed_url',
    );

    // Past its freshness it keeps working while the plan runs, and a while after it ended.
    clock.advance({ minutes: 20 });
    expect((await readLog(url, 0, 100)).status).toBe(200);
    await succeed(job.id, { plan_summary: { add: 0, change: 0, destroy: 0 } });
    clock.advance({ minutes: 2 });
    expect((await readLog(url, 0, 100)).bytes).toEqual(framed(text(CHUNKS.slice(0, 2)), true));
    clock.advance({ minutes: 4 });
    expect(await refused(url)).toBe('401 invalid_signed_url');
    const fresh: string = (await api('bob', 'GET', `/plans/plan-${job.id}`)).body.data.attributes['log-read-url'];
    expect((await readLog(fresh, 0, 100)).bytes).toEqual(framed(text(CHUNKS.slice(0, 2)), true));
    await succeed(other.id, {}, true);
  });

  it('serves the apply: pending until the plan is deployed, then the DEPLOY job and its log', async () => {
    const vine = await newVine('apply');
    const job = await runningPlan(vine.id);
    await succeed(job.id, { plan_summary: { add: 1, change: 0, destroy: 1 } });
    const pending = await api('bob', 'GET', `/applies/apply-${job.id}`);
    expect(pending.body.data).toMatchObject({
      type: 'applies',
      id: `apply-${job.id}`,
      attributes: { status: 'pending' },
    });
    expect(pending.body.data.attributes['status-timestamps']).toEqual({});
    const url: string = pending.body.data.attributes['log-read-url'];
    expect(url.startsWith(`${plane.url}/_signed/logs/apply/${job.id}/`)).toBe(true);
    expect((await readLog(url, 0, 100)).bytes.length).toBe(0);

    clock.advance({ seconds: 1 });
    const deploy = await bob.createJob({ job_type: 'DEPLOY', configuration_id: vine.id, plan_job_id: job.id });
    expect((await api('bob', 'GET', `/applies/apply-${job.id}`)).body.data.attributes.status).toBe('queued');
    expect((await agent.claimJob())?.job.id).toBe(deploy.id);
    await post(deploy.id, [['Apply complete! ✓\n', 'STDOUT']]);
    expect((await api('bob', 'GET', `/applies/apply-${job.id}`)).body.data.attributes.status).toBe('running');
    expect((await readLog(url, 0, 100)).bytes).toEqual(framed('Apply complete! ✓\n', false));
    await succeed(deploy.id, {}, false);
    const applied = await api('bob', 'GET', `/applies/apply-${job.id}`);
    expect(applied.body.data.attributes).toMatchObject({
      status: 'finished',
      'resource-additions': 1,
      'resource-destructions': 1,
    });
    expect(await readAll(url, 4)).toEqual(framed('Apply complete! ✓\n', true));
    // The plan's own log is not the apply's.
    const planUrl: string = (await api('bob', 'GET', `/plans/plan-${job.id}`)).body.data.attributes['log-read-url'];
    expect((await readLog(planUrl, 0, 100)).bytes).toEqual(framed('', true));
  });

  it("a plan that failed: errored, its apply unreachable with an empty log (and a rejected plan's too)", async () => {
    const vine = await newVine('failing');
    const job = await runningPlan(vine.id);
    await post(job.id, [['Error: no such provider\n', 'STDERR']]);
    clock.advance({ seconds: 1 });
    await agent.reportStatus(job.id, { status: 'FAILED', error_message: 'Error: no such provider' });
    const plan = await api('bob', 'GET', `/plans/plan-${job.id}`);
    expect(plan.body.data.attributes.status).toBe('errored');
    expect(Object.keys(plan.body.data.attributes['status-timestamps']).sort()).toEqual([
      'errored-at',
      'queued-at',
      'started-at',
    ]);
    expect(await readAll(plan.body.data.attributes['log-read-url'], 1000)).toEqual(
      framed('Error: no such provider\n', true),
    );
    const apply = await api('bob', 'GET', `/applies/apply-${job.id}`);
    expect(apply.body.data.attributes.status).toBe('unreachable');
    expect((await readLog(apply.body.data.attributes['log-read-url'], 0, 100)).bytes).toEqual(framed('', true));
    expect((await api('bob', 'GET', `/runs/run-${job.id}/policy-checks`)).body.data).toEqual([]);
    // A plan that succeeded but was rejected is never applied either.
    const rejected = await runningPlan(vine.id);
    await succeed(rejected.id, { plan_summary: { add: 1, change: 0, destroy: 0 } });
    expect((await api('bob', 'GET', `/applies/apply-${rejected.id}`)).body.data.attributes.status).toBe('pending');
    await cy.rejectPlan(rejected.id, { comment: 'not now' });
    expect((await api('bob', 'GET', `/applies/apply-${rejected.id}`)).body.data.attributes.status).toBe('unreachable');
  });

  it('answers 404 for a run of another owner, a job that is not a plan, or an id that is not one', async () => {
    const vine = await newVine('hidden');
    const job = await runningPlan(vine.id);
    await succeed(job.id);
    expect((await api('stranger', 'GET', `/plans/plan-${job.id}`)).status).toBe(404);
    expect((await api('stranger', 'GET', `/runs/run-${job.id}/policy-checks`)).status).toBe(404);
    expect((await api('stranger', 'GET', `/runs/run-${job.id}/run-events`)).status).toBe(404);
    expect((await api('bob', 'GET', `/plans/apply-${job.id}`)).status).toBe(404);
    expect((await api('bob', 'GET', '/plans/plan-nope')).status).toBe(404);
    const events = await api('bob', 'GET', `/runs/run-${job.id}/run-events`);
    expect(events.status).toBe(200);
    expect(events.body.data).toEqual([]);
    expect((await api('bob', 'GET', `/runs/run-${job.id}/policy-checks`)).body.data).toEqual([]);
    const unauthenticated = await fetch(`${plane.url}/api/v2/plans/plan-${job.id}`);
    expect(unauthenticated.status).toBe(401);
  });

  it('shows OPA results as a policy check; a failed mandatory policy is soft_failed, overridable by an admin only', async () => {
    const vine = await newVine('policies');
    const job = await runningPlan(vine.id);
    await succeed(job.id, {
      plan_summary: { add: 1, change: 0, destroy: 0 },
      policy_results: [FAILED_MANDATORY, FAILED_ADVISORY],
    });
    const list = await api('bob', 'GET', `/runs/run-${job.id}/policy-checks`);
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0]).toMatchObject({
      type: 'policy-checks',
      id: `polchk-${job.id}`,
      attributes: {
        status: 'soft_failed',
        scope: 'organization',
        result: { result: false, passed: 0, 'total-failed': 2, 'soft-failed': 1, 'advisory-failed': 1 },
        actions: { 'is-overridable': false },
        permissions: { 'can-override': false },
      },
      relationships: { run: { data: { type: 'runs', id: `run-${job.id}` } } },
    });
    const asAdmin = await api('cy', 'GET', `/policy-checks/polchk-${job.id}`);
    expect(asAdmin.body.data.attributes).toMatchObject({
      actions: { 'is-overridable': true },
      permissions: { 'can-override': true },
    });
    const output = await fetch(`${plane.url}/api/v2/policy-checks/polchk-${job.id}/output`, {
      headers: { authorization: `Bearer ${tokens.bob}` },
    });
    expect(output.status).toBe(200);
    const printed = await output.text();
    expect(printed).toContain('## Policy 1: no-public-buckets (mandatory, version 2)');
    expect(printed).toContain('DENY - aws_s3_bucket.logs must not be public');
    expect(printed).toContain('DENY - aws_instance.big is larger than t3.large');

    const byBob = await api('bob', 'POST', `/policy-checks/polchk-${job.id}/actions/override`);
    expect(`${byBob.status} ${byBob.body.errors?.[0]?.code}`).toBe('403 insufficient_role');
    const byCy = await api('cy', 'POST', `/policy-checks/polchk-${job.id}/actions/override`);
    expect(byCy.status).toBe(200);
    expect(byCy.body.data.attributes).toMatchObject({ status: 'overridden', actions: { 'is-overridable': false } });
    expect((await bob.getJob(job.id)).policy_override?.email).toBe('cy@example.test');
    const again = await api('cy', 'POST', `/policy-checks/polchk-${job.id}/actions/override`);
    expect(`${again.status} ${again.body.errors?.[0]?.code}`).toBe('409 plan_already_overridden');
    const audit = await ada.listAuditPage({ orgId, action: 'plan.override' });
    expect(audit.items.map((entry) => entry.target.id)).toContain(job.id);
  });

  it('a plan whose policies all passed has a passed check, with nothing to override', async () => {
    const vine = await newVine('passing');
    const job = await runningPlan(vine.id);
    await succeed(job.id, { policy_results: [PASSED, FAILED_ADVISORY] });
    const check = await api('bob', 'GET', `/policy-checks/polchk-${job.id}`);
    expect(check.body.data.attributes).toMatchObject({
      status: 'passed',
      result: { result: true, passed: 1, 'advisory-failed': 1, 'soft-failed': 0 },
    });
    const override = await api('cy', 'POST', `/policy-checks/polchk-${job.id}/actions/override`);
    expect(`${override.status} ${override.body.errors?.[0]?.code}`).toBe('409 no_failed_policies');
  });

  it('a policy its claim carried: the check is queued while the plan runs, errored when the agent reports no result of it', async () => {
    const guarded = await ada.createVineyard('guarded', { orgId });
    await ada.createPolicy({
      name: 'no-deletes',
      enforcement: 'mandatory',
      module: 'package trellis\n\ndeny contains msg if {\n  false\n  msg := "never"\n}\n',
      org_id: orgId,
      vineyard_id: guarded.id,
    });
    const vine = await ada.createConfiguration({
      name: 'guarded-web',
      vineyard_id: guarded.id,
      source: { type: 'inline', files: { 'main.tf': INLINE_MAIN_TF } },
    });
    const job = await runningPlan(vine.id);
    const queued = await api('bob', 'GET', `/runs/run-${job.id}/policy-checks`);
    expect(queued.body.data.map((check: { attributes: { status: string } }) => check.attributes.status)).toEqual([
      'queued',
    ]);
    await succeed(job.id, { plan_summary: { add: 1, change: 0, destroy: 0 } });
    const errored = await api('cy', 'GET', `/policy-checks/polchk-${job.id}`);
    expect(errored.body.data.attributes).toMatchObject({ status: 'errored', actions: { 'is-overridable': false } });
    // A plan that failed before its policies were evaluated: unreachable (the CLI skips it).
    const failed = await runningPlan(vine.id);
    await agent.reportStatus(failed.id, { status: 'FAILED', error_message: 'Error: init failed' });
    const unreachable = await api('cy', 'GET', `/policy-checks/polchk-${failed.id}`);
    expect(unreachable.body.data.attributes).toMatchObject({
      status: 'unreachable',
      actions: { 'is-overridable': false },
    });
  });

  it("lists the organization's running and queued jobs as its run queue, and counts them as capacity", async () => {
    const before = await api('bob', 'GET', '/organizations/acme/capacity');
    expect(before.body.data).toMatchObject({ type: 'organization-capacity', id: 'acme' });
    const running = await runningPlan((await newVine('queue-a')).id);
    clock.advance({ seconds: 1 });
    const first = await bob.createJob({ job_type: 'PLAN', configuration_id: (await newVine('queue-b')).id });
    clock.advance({ seconds: 1 });
    const second = await bob.createJob({ job_type: 'PLAN', configuration_id: (await newVine('queue-c')).id });
    const capacity = await api('bob', 'GET', '/organizations/acme/capacity');
    expect(capacity.body.data.attributes).toEqual({
      pending: before.body.data.attributes.pending + 2,
      running: before.body.data.attributes.running + 1,
    });
    const queue = await api('bob', 'GET', '/organizations/acme/runs/queue?page[size]=100');
    const ids = queue.body.data.map((run: { id: string }) => run.id);
    expect(ids.slice(-2)).toEqual([`run-${first.id}`, `run-${second.id}`]);
    expect(ids).toContain(`run-${running.id}`);
    const places = queue.body.data.map(
      (run: { attributes: { 'position-in-queue': number } }) => run.attributes['position-in-queue'],
    );
    expect(places).toEqual(places.map((_: number, i: number) => i + 1));
    expect(queue.body.data.find((run: { id: string }) => run.id === `run-${running.id}`).attributes.status).toBe(
      'planning',
    );
    expect(queue.body.meta.pagination['total-count']).toBe(ids.length);
    expect((await api('stranger', 'GET', '/organizations/acme/runs/queue')).status).toBe(404);
    for (const job of [first, second]) await bob.cancelJob(job.id);
    await succeed(running.id);
  });
});
