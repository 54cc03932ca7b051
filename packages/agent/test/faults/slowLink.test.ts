/**
 * Fault scenario 5 (issue 30): an agent's link slowed to 2 s of latency each way and 20 KB/s each
 * way (Toxiproxy) while one of its jobs prints a 50 MB log and another uploads a 20 MB plan, and
 * again while a DEPLOY downloads that plan. At 20 KB/s the whole of it would take over an hour,
 * so the slow link lasts a bounded window: until the plan upload has crawled for a while and the
 * log has been produced under it for a while; then it is lifted and everything drains. The jobs
 * end normally, once; every log line is stored once and in order; the plan the DEPLOY applies is
 * byte for byte the file the engine wrote; the invariant checker finds nothing.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, jobLog, TOFU, waitForJob } from '../support/e2e.js';
import {
  BULK_LOG_CONFIGURATION,
  biggestPartial,
  bulkLineNumbers,
  bigPlanConfiguration,
  filesIn,
  sizeOf,
  writeBigModule,
} from './bigTransfers.js';
import { type FaultRig, startFaultRig, TOXIPROXY, violationsOf } from './rig.js';

const SETTINGS = { TRELLIS_LOST_JOB_TIMEOUT_S: '180', TRELLIS_HEARTBEAT_TIMEOUT_S: '180' };
/** The slow link: Toxiproxy's `latency` (ms) and `bandwidth` (KB/s), both directions. */
const LATENCY_MS = 2_000;
const RATE_KBPS = 20;
/** The log: lines of ~1 KB (with OpenTofu's `terraform_data.bulk (local-exec): ` prefix), ≥ 50 MB in all. */
const LOG_LINES = 48_500;
const LOG_BYTES = 50_000_000;
/** The plan: a module whose one file is this many bytes of incompressible comment lines (~20 MB zipped in the plan). */
const PLAN_MODULE_BYTES = 27_000_000;
const PLAN_BYTES = 20_000_000;
/** How long the slow link holds each transfer at least (from when it is seen under way). */
const SLOW_UPLOAD_MS = 15_000;
const SLOW_LOG_MS = 20_000;
const SLOW_DOWNLOAD_MS = 10_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!TOFU || !TOXIPROXY)('fault scenario 5: a slow link during a 50 MB log and a 20 MB plan', () => {
  let rig: FaultRig;

  beforeAll(async () => {
    rig = await startFaultRig(SETTINGS);
  }, 180_000);

  afterAll(async () => {
    await rig?.stop();
  });

  async function slowLink() {
    await rig.proxy.addToxic('slow', 'both', { type: 'latency', attributes: { latency: LATENCY_MS } });
    await rig.proxy.addToxic('thin', 'both', { type: 'bandwidth', attributes: { rate: RATE_KBPS } });
  }

  it('the log is stored once, in order, the plan applied is the one uploaded, each job ends once', {
    timeout: 600_000,
  }, async () => {
    const { server } = rig;
    const began = Date.now();
    // Two jobs at once on the one slow link: the log's and the plan's.
    // The plan goes both ways over the slow link (its upload, then its deploy's download), so the
    // agent keeps no plan workspace to apply it from.
    const agent = await rig.startAgent('slow-link', {
      env: { TRELLIS_AGENT_CONCURRENCY: '2', TRELLIS_AGENT_WARM_DEPLOYS: 'off' },
    });
    const moduleDir = join(rig.dir, 'big-plan-module');
    writeBigModule(moduleDir, PLAN_MODULE_BYTES);
    const logVine = await rig.vine('slow-log', BULK_LOG_CONFIGURATION, { lines: String(LOG_LINES) });
    const planVine = await rig.vine('slow-plan', bigPlanConfiguration(moduleDir));

    // The link is slow from before the claims until both transfers have crawled under it.
    await slowLink();
    const logJob = await server.user.createJob({ job_type: 'DEPLOY', configuration_id: logVine.id });
    const planJob = await server.user.createJob({ job_type: 'PLAN', configuration_id: planVine.id });

    const ledgerBegun = () => {
      try {
        return /^begin /m.test(readFileSync(logVine.ledger, 'utf8'));
      } catch {
        return false;
      }
    };
    // The plan file the engine wrote (complete before the upload begins): what every copy must equal.
    const original = await eventually(
      'the plan upload to be under way',
      () => {
        const file = filesIn(agent.workDir, planJob.id, 'terraform.plan.out')[0];
        // A partial file past a state's size: the plan's.
        return file && biggestPartial(rig.artifactsDir) > 16_384 ? readFileSync(file) : undefined;
      },
      240_000,
    );
    const uploadSeenAt = Date.now();
    await eventually('the log to be produced', () => (ledgerBegun() ? true : undefined), 240_000);
    const logSeenAt = Date.now();
    await sleep(Math.max(uploadSeenAt + SLOW_UPLOAD_MS, logSeenAt + SLOW_LOG_MS) - Date.now());
    // Still crawling when the link is lifted: the slow link held the upload, not a quick one.
    const uploadedUnderSlowLink = biggestPartial(rig.artifactsDir);
    expect(uploadedUnderSlowLink).toBeGreaterThan(0);
    expect(uploadedUnderSlowLink).toBeLessThan(original.length);
    await rig.proxy.heal();
    const healedAt = Date.now();

    const planned = await waitForJob(server, planJob.id, undefined, 300_000);
    expect(planned.status).toBe('SUCCESS');
    expect(original.length).toBeGreaterThan(PLAN_BYTES);
    const sha256 = createHash('sha256').update(original).digest('hex');

    // The DEPLOY of that plan downloads it over the slow link, then the link is lifted again.
    await slowLink();
    const deploy = await server.user.createJob({
      job_type: 'DEPLOY',
      configuration_id: planVine.id,
      plan_job_id: planJob.id,
    });
    await eventually(
      'the plan download to be under way',
      () =>
        filesIn(agent.workDir, deploy.id, 'terraform.plan.out').some((file) => sizeOf(file) > 0) ? true : undefined,
      240_000,
    );
    await sleep(SLOW_DOWNLOAD_MS);
    const downloadedUnderSlowLink = Math.max(
      0,
      ...filesIn(agent.workDir, deploy.id, 'terraform.plan.out').map((file) => sizeOf(file)),
    );
    expect(downloadedUnderSlowLink).toBeLessThan(original.length);
    await rig.proxy.heal();

    const logged = await waitForJob(server, logJob.id, undefined, 300_000);
    expect(logged.status).toBe('SUCCESS');
    const deployed = await waitForJob(server, deploy.id, undefined, 300_000);
    expect(deployed.status).toBe('SUCCESS');

    // The plan: uploaded, stored and downloaded as the very bytes the engine wrote.
    const planLog = (await jobLog(server, planJob.id)).map((chunk) => chunk.log_chunk).join('');
    expect(planLog).toContain(`plan uploaded: ${original.length} bytes, sha256 ${sha256}`);
    const deployLog = (await jobLog(server, deploy.id)).map((chunk) => chunk.log_chunk).join('');
    expect(deployLog).toContain(
      `plan of job ${planJob.id} downloaded: ${original.length} bytes, sha256 ${sha256} checked`,
    );

    // The log: every line once, in order, and 50 MB of it.
    const text = (await jobLog(server, logJob.id)).map((chunk) => chunk.log_chunk).join('');
    expect(Buffer.byteLength(text)).toBeGreaterThan(LOG_BYTES);
    const numbers = bulkLineNumbers(text);
    expect(numbers.length).toBe(LOG_LINES);
    const outOfOrder = numbers.findIndex((number, index) => number !== index + 1);
    expect(outOfOrder).toBe(-1);

    console.log(
      `slow link: upload under it ${((healedAt - uploadSeenAt) / 1000).toFixed(1)} s (${uploadedUnderSlowLink} bytes), log production under it ${((healedAt - logSeenAt) / 1000).toFixed(1)} s, download under it ${SLOW_DOWNLOAD_MS / 1000} s (${downloadedUnderSlowLink} bytes); jobs done ${((Date.now() - began) / 1000).toFixed(1)} s after the first was queued`,
    );
    const violations = await rig.check();
    expect(violations, violationsOf(violations)).toEqual([]);
  });
});
