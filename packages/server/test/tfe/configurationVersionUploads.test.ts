/**
 * Configuration versions of the Terraform Cloud protocol (issue 27) through a real control plane
 * on SQLite and Postgres, over loopback: a version made on a workspace gives a signed, short-lived,
 * single-use upload URL; a PUT of a good `.tar.gz` makes it `uploaded`, a bad one (not gzip, a
 * `../` entry, a link out of the root) `errored` with the reason; a tampered, misdirected, expired
 * or reused URL is refused. A job whose source is the upload carries the version in its claim
 * (downloaded by the claiming agent only); an agent that does not say it can run uploads, or a
 * version that is not uploaded, ends the job with the reason instead.
 */
import { createHash } from 'node:crypto';
import type { TrellisClient } from '@trellis/client';
import { FakeClock, tarGz } from '@trellis/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type AgentClient, type RunningControlPlane, startControlPlane } from '../support/controlPlane.js';
import { describeEachDialect } from '../support/dialects.js';
import { rawExecute } from '../support/rawRows.js';

const GOOD = tarGz([
  { path: 'main.tf', content: 'output "where" { value = "root" }\n' },
  { path: 'envs/prod/main.tf', content: 'output "where" { value = "prod" }\n' },
  { path: 'envs/prod/shared', type: 'symlink', linkpath: '../..' },
]);

type Doc = { data: { id: string; attributes: Record<string, unknown>; relationships?: Record<string, unknown> } };

describeEachDialect('configuration versions of the Terraform Cloud protocol', (dialect) => {
  const clock = new FakeClock(new Date());
  let plane: RunningControlPlane;
  let token: string;
  let other: string;
  let workspace: string;
  let vineId: string;
  let alice: TrellisClient;
  let agent: AgentClient;

  async function tfe(path: string, method = 'GET', body?: unknown, bearer = token) {
    const response = await fetch(`${plane.url}/api/v2${path}`, {
      method,
      headers: {
        authorization: `Bearer ${bearer}`,
        ...(body === undefined ? {} : { 'content-type': 'application/vnd.api+json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null };
  }

  async function newVersion(attributes: Record<string, unknown> = { 'auto-queue-runs': false }) {
    const created = await tfe(`/workspaces/${workspace}/configuration-versions`, 'POST', {
      data: { type: 'configuration-versions', attributes },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body as Doc;
  }

  async function put(url: string, bytes: Uint8Array) {
    const response = await fetch(url, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream' },
      body: bytes,
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null };
  }

  beforeAll(async () => {
    plane = await startControlPlane(dialect, { clock });
    token = await plane.accessToken('alice@example.com');
    other = await plane.accessToken('mallory@example.com');
    alice = await plane.userClient('alice@example.com');
    agent = await plane.agentClient(alice, 'runner');
    const account = await tfe('/account/details');
    const org = account.body.data.attributes.username as string;
    const ws = await tfe(`/organizations/${org}/workspaces`, 'POST', {
      data: { type: 'workspaces', attributes: { name: 'uploads', 'working-directory': 'envs/prod' } },
    });
    expect(ws.status, JSON.stringify(ws.body)).toBe(201);
    workspace = ws.body.data.id;
    vineId = workspace.slice('ws-'.length);
  });
  afterAll(async () => {
    await plane?.close();
  });

  it('uploads a good tarball once: pending, then uploaded with its bytes; the URL is not used twice', async () => {
    const created = await newVersion({ 'auto-queue-runs': false, speculative: true });
    const attributes = created.data.attributes;
    expect(created.data.id).toMatch(/^cv-[0-9a-f-]{36}$/);
    expect(attributes).toMatchObject({
      status: 'pending',
      speculative: true,
      'auto-queue-runs': false,
      source: 'tfe-api',
    });
    const url = attributes['upload-url'] as string;
    expect(url).toMatch(/\/_signed\/configuration-versions\/.+\?token=.+&signature=/);
    expect((await put(url, GOOD)).status).toBe(200);

    const read = await tfe(`/configuration-versions/${created.data.id}`);
    expect(read.body.data.attributes).toMatchObject({ status: 'uploaded', 'upload-url': null, error: null });
    const listed = await tfe(`/workspaces/${workspace}/configuration-versions`);
    expect(listed.body.data.map((version: { id: string }) => version.id)).toContain(created.data.id);
    const ws = await tfe(`/workspaces/${workspace}`);
    expect(ws.body.data.relationships['current-configuration-version'].data).toEqual({
      type: 'configuration-versions',
      id: created.data.id,
    });
    const download = await fetch(`${plane.url}/api/v2/configuration-versions/${created.data.id}/download`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(GOOD)).toBe(true);

    const again = await put(url, GOOD);
    expect(again.status).toBe(409);
    expect(again.body.errors[0].code).toBe('configuration_version_upload_used');
  });

  it("queues a run once uploaded when the version says auto-queue-runs (HCP's default), as its maker", async () => {
    const before = (await tfe(`/workspaces/${workspace}/runs`)).body.data.length as number;
    const created = await newVersion({});
    expect(created.data.attributes['auto-queue-runs']).toBe(true);
    expect((await put(created.data.attributes['upload-url'] as string, GOOD)).status).toBe(200);
    const runs = (await tfe(`/workspaces/${workspace}/runs`)).body.data as {
      id: string;
      attributes: Record<string, unknown>;
      relationships: Record<string, { data: { id: string } }>;
    }[];
    expect(runs).toHaveLength(before + 1);
    expect(runs[0]?.relationships['configuration-version']?.data.id).toBe(created.data.id);
    expect(runs[0]?.attributes.status).toBe('pending');
    const runId = String(runs[0]?.id);
    const job = await alice.getJob(runId.slice('run-'.length));
    expect(job).toMatchObject({ job_type: 'PLAN', trigger: { type: 'cli' } });
    // Out of the way of the claims below.
    expect((await tfe(`/runs/${runId}/actions/cancel`, 'POST', {})).status).toBe(202);
  });

  it.each([
    ['not gzip', Buffer.from('this is not a tarball at all'), /gzip/i],
    ['a path escaping the root', tarGz([{ path: '../escape.tf', content: '' }]), /\.\.\/escape\.tf/],
    ['a link out of the root', tarGz([{ path: 'creds', type: 'symlink', linkpath: '../../etc' }]), /creds/],
  ])('refuses %s: 422, the version errored with the reason', async (_name, bytes, reason) => {
    const created = await newVersion();
    const answer = await put(created.data.attributes['upload-url'] as string, bytes);
    expect(answer.status, JSON.stringify(answer.body)).toBe(422);
    expect(answer.body.errors[0].code).toBe('configuration_invalid');
    const read = await tfe(`/configuration-versions/${created.data.id}`);
    expect(read.body.data.attributes).toMatchObject({ status: 'errored', error: 'configuration_invalid' });
    expect(read.body.data.attributes['error-message']).toMatch(reason);
  });

  it('refuses a tampered, misdirected or expired URL, and keeps the version pending', async () => {
    const first = await newVersion();
    const second = await newVersion();
    const url = new URL(first.data.attributes['upload-url'] as string);
    const tampered = new URL(url);
    tampered.searchParams.set('signature', `${url.searchParams.get('signature')?.slice(0, -2)}AA`);
    const misdirected = new URL(second.data.attributes['upload-url'] as string);
    misdirected.search = url.search;
    for (const bad of [tampered, misdirected]) {
      const answer = await put(bad.toString(), GOOD);
      expect(answer.status).toBe(401);
      expect(answer.body.errors[0].code).toBe('invalid_signed_url');
    }
    clock.advance({ minutes: 6 });
    const expired = await put(url.toString(), GOOD);
    expect(expired.status).toBe(401);
    const read = await tfe(`/configuration-versions/${first.data.id}`);
    // Only the answer that made it carries the URL (as HCP's): a lost one means a new version.
    expect(read.body.data.attributes).toMatchObject({ status: 'pending', 'upload-url': null });
    // Nothing to download yet: a 404, as go-tfe expects.
    expect((await tfe(`/configuration-versions/${first.data.id}/download`)).status).toBe(404);
    // The second version's own URL, signed before the clock moved, has expired too.
    expect((await put(second.data.attributes['upload-url'] as string, GOOD)).status).toBe(401);
  });

  it('is for those who may plan the workspace: another person sees no version and makes none', async () => {
    const created = await newVersion();
    expect((await tfe(`/configuration-versions/${created.data.id}`, 'GET', undefined, other)).status).toBe(404);
    const made = await tfe(
      `/workspaces/${workspace}/configuration-versions`,
      'POST',
      { data: { type: 'configuration-versions', attributes: {} } },
      other,
    );
    expect(made.status).toBe(404);
    expect((await tfe('/configuration-versions/cv-nope')).status).toBe(404);
  });

  /**
   * A PLAN of the workspace whose snapshot runs `versionId` (what a run of the protocol queues; its
   * queueing is not this test's): the job's snapshot is rewritten under a hash of its own.
   */
  async function uploadJob(versionId: string): Promise<string> {
    const job = await alice.createJob({ job_type: 'PLAN', configuration_id: vineId });
    const { variables: _variables, ...summary } = {
      ...job.config_snapshot,
      source: { type: 'upload', configuration_version_id: versionId, path: 'envs/prod' },
    };
    const snapshot = { ...summary, variables: {} };
    const hash = createHash('sha256').update(`${job.id}:${versionId}`).digest('hex');
    const p = (n: number) => (dialect === 'postgres' ? `$${n}` : '?');
    const json = dialect === 'postgres' ? '::jsonb' : '';
    await rawExecute(
      plane.database,
      `INSERT INTO config_snapshots (owner_id, config_hash, snapshot) VALUES (${p(1)}, ${p(2)}, ${p(3)}${json})`,
      [job.owner_id, hash, JSON.stringify(snapshot)],
    );
    await rawExecute(
      plane.database,
      `UPDATE jobs SET config_hash = ${p(1)}, config_snapshot = ${p(2)}${json} WHERE id = ${p(3)}`,
      [hash, JSON.stringify(summary), job.id],
    );
    return job.id;
  }

  it('gives the claiming agent the uploaded version; an agent that cannot run uploads ends the job instead', async () => {
    // The CLI's workspace has no configuration of its own: a stand-in source lets a PLAN be queued.
    await alice.updateConfiguration(vineId, { source: { type: 'inline', files: { 'main.tf': '' } } });
    const created = await newVersion();
    expect((await put(created.data.attributes['upload-url'] as string, GOOD)).status).toBe(200);
    const versionId = created.data.id.slice('cv-'.length);

    const jobId = await uploadJob(versionId);
    const claimed = await agent.claimJob({ features: ['upload_source', 'run_options'] });
    expect(claimed?.job.id).toBe(jobId);
    expect(claimed?.job.config_snapshot.source).toEqual({
      type: 'upload',
      configuration_version_id: versionId,
      path: 'envs/prod',
    });
    expect(claimed?.configuration_version).toEqual({
      id: versionId,
      sha256: createHash('sha256').update(GOOD).digest('hex'),
      size: GOOD.length,
      url: `/api/jobs/${jobId}/configuration-versions/${versionId}`,
      strip_components: 0,
    });
    const bytes = await agent.downloadConfigurationVersion(claimed?.configuration_version?.url as string);
    expect(Buffer.from(await new Response(bytes.body).arrayBuffer()).equals(GOOD)).toBe(true);
    await agent.reportStatus(jobId, { status: 'SUCCESS' });

    // An agent that names no features (an older one) never runs it as something else.
    const old = await uploadJob(versionId);
    expect(await agent.claimJob()).toBeNull();
    const failed = await alice.getJob(old);
    expect(failed.status).toBe('FAILED');
    expect(failed.error_message).toMatch(/^agent_outdated: this job needs an uploaded configuration/);

    // A version that is not uploaded ends its job with why.
    const broken = await newVersion();
    await put(broken.data.attributes['upload-url'] as string, Buffer.from('nope'));
    const errored = await uploadJob(broken.data.id.slice('cv-'.length));
    expect(await agent.claimJob({ features: ['upload_source', 'run_options'] })).toBeNull();
    const ended = await alice.getJob(errored);
    expect(ended.status).toBe('FAILED');
    expect(ended.error_message).toMatch(/is errored: .*gzip.*; upload the configuration again/i);
  });
});
