import { randomUUID } from 'node:crypto';
import { parsePrometheusText, type PrometheusFamily, sampleValue } from '@trellis/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AgentClient,
  type RunningControlPlane,
  startControlPlane,
  vineyardWithConfiguration,
} from './support/controlPlane.js';
import { describeEachDialect } from './support/dialects.js';

const METRICS_TOKEN = 'metrics-token-for-tests-0123456789';
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

async function scrape(url: string, token: string | null = METRICS_TOKEN): Promise<Map<string, PrometheusFamily>> {
  const response = await fetch(url, token === null ? {} : { headers: { Authorization: `Bearer ${token}` } });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(await response.text());
}

function agentGet(server: RunningControlPlane, agent: AgentClient, path: string): Promise<Response> {
  return fetch(`${server.url}${path}`, {
    headers: { 'X-Worker-ID': agent.workerId, 'X-Worker-Token': agent.workerToken },
  });
}

describeEachDialect('GET /metrics behind TRELLIS_METRICS_TOKEN', (dialect) => {
  let server: RunningControlPlane;

  beforeAll(async () => {
    server = await startControlPlane(dialect, { env: { TRELLIS_METRICS_TOKEN: METRICS_TOKEN } });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('refuses a request without the token or with another one, as a problem with its request id', async () => {
    for (const headers of [{}, { Authorization: `Bearer ${METRICS_TOKEN}x` }, { Authorization: 'Basic abc' }]) {
      const response = await fetch(`${server.url}/metrics`, { headers });
      expect(response.status).toBe(401);
      expect(response.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
      const body = (await response.json()) as { code: string; request_id: string };
      expect(['unauthenticated', 'invalid_token']).toContain(body.code);
      expect(body.request_id).toBe(response.headers.get('x-request-id'));
    }
  });

  it('counts what a scripted scenario of jobs, claims, logs and heartbeats did', async () => {
    const user = await server.userClient('scenario@example.com');
    const agent = await server.agentClient(user, 'scenario-agent');
    // Registered, never heard of: offline.
    await server.agentClient(user, 'silent-agent');
    const jobs = [];
    for (const name of ['one', 'two', 'three']) {
      const { configuration } = await vineyardWithConfiguration(user, `metrics-${name}`);
      jobs.push(await user.createJob({ job_type: 'PLAN', configuration_id: configuration.id }));
    }
    await agent.heartbeat('1.0.0');
    const first = await agent.claimJob();
    if (!first) throw new Error('expected a job');
    await agent.appendLog(first.job.id, 'hello\n', 'STDOUT');
    await agent.appendLog(first.job.id, 'wörld\n', 'STDOUT');
    await agent.reportStatus(first.job.id, { status: 'SUCCESS' });
    const second = await agent.claimJob();
    if (!second) throw new Error('expected a second job');
    await agent.heartbeat('1.0.0');

    const metrics = await scrape(`${server.url}/metrics`);
    const requests = 'trellis_http_request_duration_seconds_count';
    expect(sampleValue(metrics, requests, { method: 'POST', route: '/api/jobs/claim', status: '200' })).toBe(2);
    expect(sampleValue(metrics, requests, { method: 'POST', route: '/api/jobs/:id/logs', status: '201' })).toBe(2);
    expect(sampleValue(metrics, requests, { method: 'PUT', route: '/api/jobs/:id/status', status: '200' })).toBe(1);
    expect(sampleValue(metrics, requests, { method: 'POST', route: '/api/workers/heartbeat', status: '200' })).toBe(2);
    expect(sampleValue(metrics, 'trellis_jobs', { type: 'PLAN', status: 'QUEUED' })).toBe(1);
    expect(sampleValue(metrics, 'trellis_jobs', { type: 'PLAN', status: 'PROCESSING' })).toBe(1);
    expect(sampleValue(metrics, 'trellis_jobs', { type: 'PLAN', status: 'SUCCESS' })).toBe(1);
    expect(sampleValue(metrics, 'trellis_jobs', { type: 'DEPLOY', status: 'QUEUED' })).toBe(0);
    expect(sampleValue(metrics, 'trellis_job_queue_depth')).toBe(1);
    expect(sampleValue(metrics, 'trellis_job_queue_oldest_age_seconds')).toBeGreaterThanOrEqual(0);
    expect(sampleValue(metrics, 'trellis_agents', { status: 'busy' })).toBe(1);
    expect(sampleValue(metrics, 'trellis_agents', { status: 'online' })).toBe(0);
    expect(sampleValue(metrics, 'trellis_agents', { status: 'offline' })).toBe(1);
    expect(sampleValue(metrics, 'trellis_log_chunks_ingested_total')).toBe(2);
    expect(sampleValue(metrics, 'trellis_log_bytes_ingested_total')).toBe(6 + Buffer.byteLength('wörld\n'));
    expect(sampleValue(metrics, 'trellis_job_queue_to_claim_seconds_count', { type: 'PLAN' })).toBe(2);
    // Only the first job reported anything after its claim.
    expect(sampleValue(metrics, 'trellis_job_claim_to_start_seconds_count', { type: 'PLAN' })).toBe(1);
    expect(sampleValue(metrics, 'trellis_outbox_backlog')).toBe(0);
    for (const kind of ['notification', 'vcs_feedback']) {
      expect(sampleValue(metrics, 'trellis_outbox_backlog_by_kind', { kind })).toBe(0);
    }
    expect(sampleValue(metrics, 'trellis_claim_long_polls_open')).toBe(0);
    expect(sampleValue(metrics, 'trellis_live_log_streams_open')).toBe(0);
    expect(sampleValue(metrics, 'trellis_db_pool_acquires_total')).toBeGreaterThan(0);
    expect(sampleValue(metrics, 'trellis_db_pool_acquire_wait_seconds_total')).toBeGreaterThanOrEqual(0);
    expect(sampleValue(metrics, 'trellis_db_pool_connections', { state: 'pending' })).toBe(0);
    // On Postgres a NOTIFY comes back on its own connection; the first of the three has by now.
    expect(sampleValue(metrics, 'trellis_event_bus_delay_seconds_count', { type: 'job_queued' })).toBeGreaterThan(0);
    expect(metrics.get('trellis_http_request_duration_seconds')?.type).toBe('histogram');
    expect(metrics.get('trellis_log_bytes_ingested_total')?.type).toBe('counter');
    // No label anywhere carries an id.
    for (const family of metrics.values()) {
      for (const sample of family.samples) expect(Object.values(sample.labels).join(' ')).not.toMatch(UUID);
    }
  });

  it('keeps one series per route template however many ids are asked for', async () => {
    const user = await server.userClient('cardinality@example.com');
    const agent = await server.agentClient(user, 'cardinality-agent');
    const seriesCount = async () => {
      const metrics = await scrape(`${server.url}/metrics`);
      return (metrics.get('trellis_http_request_duration_seconds')?.samples ?? []).length;
    };
    expect((await agentGet(server, agent, `/api/jobs/${randomUUID()}`)).status).toBe(404);
    expect((await agentGet(server, agent, `/api/no-such-route/${randomUUID()}`)).status).toBe(404);
    const before = await seriesCount();
    for (let i = 0; i < 25; i++) {
      expect((await agentGet(server, agent, `/api/jobs/${randomUUID()}`)).status).toBe(404);
      expect((await agentGet(server, agent, `/api/no-such-route/${randomUUID()}`)).status).toBe(404);
    }
    expect(await seriesCount()).toBe(before);
    const metrics = await scrape(`${server.url}/metrics`);
    const requests = 'trellis_http_request_duration_seconds_count';
    expect(sampleValue(metrics, requests, { method: 'GET', route: '/api/jobs/:id', status: '404' })).toBe(26);
    expect(sampleValue(metrics, requests, { method: 'GET', route: 'unmatched', status: '404' })).toBe(26);
  });
});

describe('GET /metrics on TRELLIS_METRICS_PORT', () => {
  let server: RunningControlPlane;

  beforeAll(async () => {
    server = await startControlPlane('sqlite', { env: { TRELLIS_METRICS_PORT: '0' } });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('serves the metrics on their own port without a token, and not on the main port', async () => {
    const url = server.controlPlane.metricsUrl();
    if (url === null) throw new Error('expected a metrics listener');
    expect(new URL(url).port).not.toBe(new URL(server.url).port);
    await fetch(`${server.url}/healthz`);
    const metrics = await scrape(url, null);
    expect(
      sampleValue(metrics, 'trellis_http_request_duration_seconds_count', {
        method: 'GET',
        route: '/healthz',
        status: '200',
      }),
    ).toBe(1);
    const main = await fetch(`${server.url}/metrics`);
    expect(await main.text()).not.toContain('trellis_http_request_duration_seconds');
    expect(main.status).toBe(404);
  });
});

describe('metrics by default', () => {
  let server: RunningControlPlane;

  beforeAll(async () => {
    server = await startControlPlane('sqlite');
  });
  afterAll(async () => {
    await server?.close();
  });

  it('are off: no /metrics and no listener of their own', async () => {
    expect(server.controlPlane.metricsUrl()).toBeNull();
    const response = await fetch(`${server.url}/metrics`);
    expect(response.status).toBe(404);
    expect(await response.text()).not.toContain('trellis_');
  });
});
