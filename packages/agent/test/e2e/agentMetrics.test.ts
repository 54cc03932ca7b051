import { parsePrometheusText, sampleValue } from '@trellis/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AgentProcess,
  type E2eServer,
  eventually,
  jobLog,
  killLeftovers,
  startAgent,
  startServer,
  TOFU,
  vineOf,
  waitForJob,
} from '../support/e2e.js';

describe.skipIf(!TOFU)('trellis-agent --metrics-port', { timeout: 180_000 }, () => {
  let server: E2eServer;
  let agent: AgentProcess;

  beforeAll(async () => {
    server = await startServer();
    agent = await startAgent(server, { name: 'metered', args: ['--metrics-port', '0'] });
  });

  afterAll(async () => {
    await agent?.stop();
    killLeftovers();
    await server?.stop();
  });

  it('serves the jobs it ran, their durations, the log bytes shipped and its claim waits', async () => {
    const url = await eventually('the agent to serve its metrics', () => {
      for (const line of agent.output().split('\n')) {
        if (!line.includes('"serving metrics"')) continue;
        return (JSON.parse(line) as { url: string }).url;
      }
      return undefined;
    });
    const vine = await vineOf(server, 'metered', 'outputs', { cluster: 'metered' });
    const plan = await server.user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
    expect(await waitForJob(server, plan.id)).toMatchObject({ status: 'SUCCESS' });
    const shipped = (await jobLog(server, plan.id)).reduce(
      (bytes, chunk) => bytes + Buffer.byteLength(chunk.log_chunk, 'utf8'),
      0,
    );

    // The agent counts the job once its final report is answered: a scrape may come just before.
    const metrics = await eventually('the job to be counted', async () => {
      const response = await fetch(url);
      expect(response.status).toBe(200);
      const parsed = parsePrometheusText(await response.text());
      const counted = parsed.get('trellis_agent_jobs_total')?.samples.length ?? 0;
      return counted > 0 ? parsed : undefined;
    });
    expect(sampleValue(metrics, 'trellis_agent_jobs_total', { type: 'PLAN', outcome: 'SUCCESS' })).toBe(1);
    expect(sampleValue(metrics, 'trellis_agent_job_duration_seconds_count', { type: 'PLAN', outcome: 'SUCCESS' })).toBe(
      1,
    );
    expect(sampleValue(metrics, 'trellis_agent_log_bytes_total')).toBe(shipped);
    expect(sampleValue(metrics, 'trellis_agent_claim_wait_seconds_count')).toBe(1);
    expect(sampleValue(metrics, 'trellis_agent_reconnects_total')).toBe(0);
    expect(sampleValue(metrics, 'trellis_agent_running_jobs')).toBe(0);
    expect((await fetch(url.replace('/metrics', '/other'))).status).toBe(404);
  });
});
