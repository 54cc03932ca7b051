/**
 * Fault scenario 3, its plan upload (issue 30): a control plane replica `SIGKILL`ed while an
 * agent streams a plan file to it; the other replica, on the same Postgres and artifact store,
 * serves from then on (Toxiproxy, in front, is pointed at it as a balancer would). The agent
 * uploads the plan again, to the other; the plan is stored once, complete, and was never to be
 * seen half-written (the download answers "no plan" or the whole file, never a part); the DEPLOY
 * of that plan applies the very bytes the engine wrote; each job ends once; the invariant checker
 * finds nothing.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TrellisApiError, TrellisClient } from '@trellis/client';
import { connectPostgres } from '@trellis/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, logText, TOFU, waitForJob } from '../support/e2e.js';
import { biggestPartial, bigPlanConfiguration, filesIn, writeBigModule } from './bigTransfers.js';
import { type FaultRig, startFaultRig, TOXIPROXY, violationsOf } from './rig.js';

const SETTINGS = { TRELLIS_LOST_JOB_TIMEOUT_S: '120', TRELLIS_HEARTBEAT_TIMEOUT_S: '120' };
/** A plan of ~6 MB, sent at 200 KB/s: the kill lands well inside the upload. */
const PLAN_MODULE_BYTES = 8_000_000;
const UPLOAD_RATE_KBPS = 200;
/** The replica dies once this much of the plan has reached it. */
const KILL_AFTER_BYTES = 1_000_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!TOFU || !TOXIPROXY)('fault scenario 3: a replica killed during a plan upload', () => {
  let rig: FaultRig;

  beforeAll(async () => {
    rig = await startFaultRig(SETTINGS, { replicas: 2 });
  }, 180_000);

  afterAll(async () => {
    await rig?.stop();
  });

  it('the agent uploads the plan again to the other replica: stored once, whole, never half-visible', {
    timeout: 300_000,
  }, async () => {
    const { server, proxy } = rig;
    const other = rig.second;
    if (!other) throw new Error('the rig has no second replica');
    const otherServer = { ...server, url: other.url, user: other.user };
    // The deploy downloads the plan from the other replica (what this scenario checks), so the
    // agent keeps no plan workspace to apply it from.
    const agent = await rig.startAgent('uploader', { env: { TRELLIS_AGENT_WARM_DEPLOYS: 'off' } });
    const moduleDir = join(rig.dir, 'big-plan-module');
    writeBigModule(moduleDir, PLAN_MODULE_BYTES);
    const vine = await rig.vine('killed-upload', bigPlanConfiguration(moduleDir));

    // What any agent of the owner downloads, read on the surviving replica all along: "no plan"
    // (404) or a whole file, by its digest; never a part of one.
    const worker = new TrellisClient({
      baseUrl: other.url,
      auth: { kind: 'worker', workerId: agent.workerId, workerToken: agent.workerToken },
    });
    const seen: string[] = [];
    let watching = true;
    const planJob = await server.user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
    const watcher = (async () => {
      while (watching) {
        try {
          const artifact = await worker.downloadPlanArtifact(planJob.id);
          const bytes = Buffer.from(await new Response(artifact.body).arrayBuffer());
          const digest = createHash('sha256').update(bytes).digest('hex');
          seen.push(digest === artifact.sha256 && bytes.length === artifact.size ? `whole ${digest}` : 'damaged');
        } catch (error) {
          seen.push(error instanceof TrellisApiError && error.status === 404 ? 'none' : `error ${error}`);
        }
        await sleep(500);
      }
    })();

    // The upload crawls through the proxy; the replica receiving it dies in the middle.
    await proxy.addToxic('thin', 'upstream', { type: 'bandwidth', attributes: { rate: UPLOAD_RATE_KBPS } });
    const original = await eventually(
      'the plan upload to be under way',
      () => {
        const file = filesIn(agent.workDir, planJob.id, 'terraform.plan.out')[0];
        return file && biggestPartial(rig.artifactsDir) >= KILL_AFTER_BYTES ? readFileSync(file) : undefined;
      },
      180_000,
    );
    await server.kill();
    expect(biggestPartial(rig.artifactsDir)).toBeLessThan(original.length);
    await proxy.setUpstream(new URL(other.url).host);
    await proxy.removeToxics();

    const planned = await waitForJob(otherServer, planJob.id, undefined, 180_000);
    expect(planned.status).toBe('SUCCESS');
    const sha256 = createHash('sha256').update(original).digest('hex');
    // Cut by the kill, sent again whole to the other replica.
    expect(agent.output()).toContain('control plane call failed; retrying');
    expect(await logText(otherServer, planJob.id)).toContain(
      `plan uploaded: ${original.length} bytes, sha256 ${sha256}`,
    );

    const deploy = await other.user.createJob({
      job_type: 'DEPLOY',
      configuration_id: vine.id,
      plan_job_id: planJob.id,
    });
    expect((await waitForJob(otherServer, deploy.id, undefined, 180_000)).status).toBe('SUCCESS');
    expect(await logText(otherServer, deploy.id)).toContain(
      `plan of job ${planJob.id} downloaded: ${original.length} bytes, sha256 ${sha256} checked`,
    );
    watching = false;
    await watcher;
    expect(seen.filter((answer) => answer !== 'none' && answer !== `whole ${sha256}`)).toEqual([]);
    expect(seen).toContain(`whole ${sha256}`);
    // One plan record for the job, naming the whole file.
    const db = await connectPostgres(rig.postgres.url);
    try {
      const rows = await db.query<{ size: string; sha256: string }>(
        'SELECT size, sha256 FROM plan_artifacts WHERE job_id = $1',
        [planJob.id],
      );
      expect(rows.rows.map((row) => ({ size: Number(row.size), sha256: row.sha256 }))).toEqual([
        { size: original.length, sha256 },
      ]);
    } finally {
      await db.end();
    }

    const violations = await rig.check(otherServer);
    expect(violations, violationsOf(violations)).toEqual([]);
  });
});
