/**
 * A deleted configuration keeps its state versions for the retention period (issue 25), then the
 * `deleted-vine-retention` task purges them, bytes too: a real control plane on each dialect, its
 * clock and scheduler turned by hand, state written by an agent through the http backend.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { TrellisClient } from '@trellis/client';
import { cliTokensFor, FakeClock, ManualTicker } from '@trellis/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningControlPlane, startControlPlane, vineyardWithConfiguration } from './support/controlPlane.js';
import { describeEachDialect } from './support/dialects.js';

const EMPTY_STATE = (serial: number) =>
  `${JSON.stringify({ version: 4, terraform_version: '1.9.0', serial, lineage: 'l-1', outputs: {}, resources: [] })}\n`;

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

describeEachDialect('the retention of a deleted configuration', (dialect) => {
  let server: RunningControlPlane;
  const ticker = new ManualTicker();
  const clock = new FakeClock(new Date());
  const artifactsDir = mkdtempSync(join(tmpdir(), 'trellis-retention-artifacts-'));

  beforeAll(async () => {
    server = await startControlPlane(dialect, {
      clock,
      ticker,
      env: {
        TRELLIS_RETENTION_INTERVAL_S: '60',
        TRELLIS_DELETED_VINE_RETENTION_DAYS: '7',
        TRELLIS_ARTIFACTS_URL: pathToFileURL(artifactsDir).href,
      },
    });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(artifactsDir, { recursive: true, force: true });
  });

  it('keeps the state versions until the retention ends, then purges them; the job history stays', async () => {
    const user = await server.userClient();
    const agent = await server.agentClient(user, 'retention-agent');
    const { configuration } = await vineyardWithConfiguration(user, 'kept');
    const job = await user.createJob({ job_type: 'PLAN', configuration_id: configuration.id });
    expect((await agent.claimJob())?.job.id).toBe(job.id);
    const basic = `Basic ${Buffer.from(`${agent.workerId}:${agent.workerToken}`).toString('base64')}`;
    for (const serial of [1, 2]) {
      const written = await fetch(`${server.url}/api/state/${configuration.id}`, {
        method: 'POST',
        headers: { authorization: basic, 'content-type': 'application/json' },
        body: EMPTY_STATE(serial),
      });
      expect(written.status).toBe(200);
    }
    await agent.reportStatus(job.id, { status: 'SUCCESS', execution_metadata: {} });
    const stateFiles = () => filesUnder(artifactsDir).filter((path) => path.includes(configuration.id));
    expect(stateFiles()).toHaveLength(2);

    const deleted = await user.deleteConfiguration('kept');
    const keptUntil = new Date(clock.now().getTime() + 7 * 86_400_000).toISOString();
    expect(deleted).toEqual({ id: configuration.id, name: 'kept', state_kept_until: keptUntil });
    const { scheduler } = server.controlPlane;

    // Within the retention, a pass leaves the state alone.
    clock.advance({ seconds: 7 * 86_400 - 60 });
    ticker.advance(60);
    await scheduler.idle();
    expect(stateFiles()).toHaveLength(2);

    clock.advance({ seconds: 60 });
    ticker.advance(60);
    await scheduler.idle();
    expect(scheduler.stats()['deleted-vine-retention']?.failures).toBe(0);
    expect(stateFiles()).toEqual([]);
    // A week on, the person signs in again: the job is still there, the configuration is not.
    const { access_token } = await cliTokensFor(server.controlPlane.useCases.auth, 'alice@example.com');
    const later = new TrellisClient({ baseUrl: server.url, auth: { kind: 'bearer', accessToken: () => access_token } });
    expect((await later.getJob(job.id)).status).toBe('SUCCESS');
    await expect(later.getConfiguration(configuration.id)).rejects.toMatchObject({ status: 404 });
  });
});
