/**
 * Fault scenario 6 (issue 30): a full disk is a clear error and loses nothing already stored.
 * The filesystem artifact store and an agent's work dir each live on a small tmpfs of their own,
 * filled by a file so that a plan does not fit: the kernel's own ENOSPC, nothing mocked.
 *
 * - The artifact store fills during a plan upload: the control plane answers `507
 *   insufficient_storage`, the job fails saying the control plane's storage is full, the earlier
 *   state still downloads byte for byte, no temp file is left to keep the disk full, and once space
 *   is freed the next plan succeeds.
 * - The agent's work dir fills during a plan: the job fails saying the agent's disk is full; the
 *   same agent, once space is freed, runs the next job.
 *
 * The plan is made big deterministically: a `terraform_data` whose (sensitive) input is 4 MiB of
 * hex digests, a plan file of about 2 MB however the engine compresses it.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { TrellisApiError } from '@trellis/client';
import { canMountTmpfs, mountTmpfs, type Tmpfs } from '@trellis/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, TOFU, waitForJob } from '../support/e2e.js';
import { type FaultRig, startFaultRig, TOXIPROXY, violationsOf } from './rig.js';

const SETTINGS = { TRELLIS_LOST_JOB_TIMEOUT_S: '60', TRELLIS_SWEEP_INTERVAL_S: '1', TRELLIS_HEARTBEAT_TIMEOUT_S: '60' };
const MiB = 1024 * 1024;

/** 8 KiB of hex digests per block: `pad_blocks = 512` is 4 MiB, a plan file of about 2 MB. */
const PAD_CONFIGURATION = `
variable "pad_blocks" {
  type    = number
  default = 0
}

resource "terraform_data" "pad" {
  count = var.pad_blocks > 0 ? 1 : 0
  input = sensitive(join("", [for i in range(var.pad_blocks) : join("", [for j in range(64) : sha512("\${var.run}-\${i}-\${j}")])]))
}
`;
const BIG_PLAN = { pad_blocks: '512' };
/** What stays free when a disk is filled: far less than the plan needs, far more than anything else written. */
const LEFT_FREE = 256 * 1024;

async function stateText(rig: FaultRig, vineId: string): Promise<{ id: number; text: string }> {
  const history = await rig.server.user.stateHistory(vineId);
  const current = history.versions.find((version) => !version.rejected);
  if (!current) throw new Error(`vine ${vineId} has no state version`);
  return {
    id: current.id,
    text: await new Response(await rig.server.user.downloadStateVersion(vineId, current.id)).text(),
  };
}

describe.skipIf(!TOFU || !TOXIPROXY || !canMountTmpfs)(
  'fault scenario 6: a full disk (the tmpfs mounts need root)',
  () => {
    let rig: FaultRig;
    let artifacts: Tmpfs;
    let work: Tmpfs;
    let artifactsDir: string;

    beforeAll(async () => {
      artifacts = mountTmpfs(32 * MiB, 'trellis-faults-artifacts-');
      work = mountTmpfs(32 * MiB, 'trellis-faults-work-');
      artifactsDir = join(artifacts.dir, 'store');
      rig = await startFaultRig(SETTINGS, { artifactsDir });
    }, 180_000);

    afterAll(async () => {
      await rig?.stop();
      artifacts?.unmount();
      work?.unmount();
    });

    it('the artifact store fills during a plan upload: 507 insufficient_storage, the job fails saying so, nothing stored is lost, the next plan succeeds', {
      timeout: 420_000,
    }, async () => {
      const { server } = rig;
      await rig.startAgent('store-full');
      const stored = await rig.ledgerVine('stored-before');
      const deploy = await server.user.createJob({ job_type: 'DEPLOY', configuration_id: stored.id });
      expect((await waitForJob(server, deploy.id, undefined, 180_000)).status).toBe('SUCCESS');
      const before = await stateText(rig, stored.id);

      const big = await rig.ledgerVine('big-plan', BIG_PLAN, { 'pad.tf': PAD_CONFIGURATION });
      artifacts.fill(LEFT_FREE);
      const plan = await server.user.createJob({ job_type: 'PLAN', configuration_id: big.id });
      const failed = await waitForJob(server, plan.id, undefined, 180_000);
      expect(failed.status).toBe('FAILED');
      // The agent quotes the control plane's answer: its status and problem code.
      expect(failed.error_message).toMatch(
        /^the control plane's artifact storage is full: the plan \(\d+ bytes\) was not stored \(507 insufficient_storage: artifact storage cannot write the artifact: no space left on device \(ENOSPC\)/,
      );

      // A state write on the full store is refused the same way, and stores nothing.
      artifacts.fill(0);
      const refused = await server.user.rollbackState(stored.id, before.id).then(
        () => null,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(TrellisApiError);
      expect(refused).toMatchObject({ status: 507, code: 'insufficient_storage' });

      // Nothing stored before is lost, and no half-written temp file keeps the disk full.
      expect(await stateText(rig, stored.id)).toEqual(before);
      expect(readdirSync(join(artifactsDir, 'tmp'))).toEqual([]);

      artifacts.free();
      const again = await server.user.createJob({ job_type: 'PLAN', configuration_id: big.id });
      const planned = await waitForJob(server, again.id, undefined, 180_000);
      expect(planned.status, planned.error_message ?? '').toBe('SUCCESS');
      expect(await stateText(rig, stored.id)).toEqual(before);

      const violations = await rig.check();
      expect(violations, violationsOf(violations)).toEqual([]);
    });

    it("the agent's work dir fills during a plan: the job fails saying the agent's disk is full, the same agent runs the next job once space is freed", {
      timeout: 420_000,
    }, async () => {
      const { server } = rig;
      const agent = await rig.startAgent('work-full', { workDir: join(work.dir, 'agent') });
      const stored = await rig.ledgerVine('stored-before-work-full');
      const deploy = await server.user.createJob({ job_type: 'DEPLOY', configuration_id: stored.id });
      expect((await waitForJob(server, deploy.id, undefined, 180_000)).status).toBe('SUCCESS');
      const before = await stateText(rig, stored.id);

      const big = await rig.ledgerVine('big-plan-work-full', BIG_PLAN, { 'pad.tf': PAD_CONFIGURATION });
      work.fill(LEFT_FREE);
      const plan = await server.user.createJob({ job_type: 'PLAN', configuration_id: big.id });
      const failed = await waitForJob(server, plan.id, undefined, 180_000);
      expect(failed.status).toBe('FAILED');
      expect(failed.error_message).toMatch(
        /^the agent's disk is full: `plan` could not write \(no space left on device\): Error: Failed to write plan file; free space in the agent's work directory/,
      );
      // The failed job's workspace (and its half-written plan file) is gone; the plugin cache stays.
      await eventually('the workspace to be removed', () =>
        readdirSync(join(work.dir, 'agent')).some((name) => name.startsWith('job-')) ? undefined : true,
      );
      expect(agent.child.exitCode, 'the agent keeps running').toBeNull();

      work.free();
      const again = await server.user.createJob({ job_type: 'PLAN', configuration_id: big.id });
      const planned = await waitForJob(server, again.id, undefined, 180_000);
      expect(planned.status, planned.error_message ?? '').toBe('SUCCESS');
      expect(planned.claimed_by_worker_id).toBe(agent.workerId);
      expect(await stateText(rig, stored.id)).toEqual(before);

      const violations = await rig.check();
      expect(violations, violationsOf(violations)).toEqual([]);
    });
  },
);
