/**
 * Issue 30: a full disk is a clear failure of the job. The control plane's artifact storage full
 * (`507 insufficient_storage` for the plan upload or the engine's state write) and the agent's own
 * work directory full (the engine's or the agent's writes) each fail the job with a message that
 * says which disk, once, without retrying; the workspace is removed either way.
 */
import { chmodSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TrellisApiError, type TrellisClient } from '@trellis/client';
import { canMountTmpfs, mountTmpfs, type Tmpfs } from '@trellis/testkit';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Backoff } from '@trellis/client';
import { AgentLogger } from '../../src/logging/AgentLogger.js';
import { LogShipper } from '../../src/logs/LogShipper.js';
import { FakeLogApi } from '../support/fakeLogApi.js';
import { inlinePlanClaim, testJobRunner } from '../support/jobRunner.js';

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-disk-full-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

interface RunSpec {
  /** The fake engine's `plan`: a shell snippet (its `-out=` file is in `$out`). */
  plan?: string;
  upload?: () => Promise<unknown>;
  files?: Record<string, string>;
  workDir?: string;
}

async function run(spec: RunSpec) {
  const engine = join(dir, 'fake-tofu');
  writeFileSync(
    engine,
    `#!/bin/sh\nout=terraform.plan.out\ncase "$1" in\n  plan) ${spec.plan ?? 'echo plan > "$out"'};;\n  show) echo '{}';;\nesac\n`,
  );
  chmodSync(engine, 0o755);
  const api = new FakeLogApi();
  const statuses: { status: string; error_message?: string }[] = [];
  let uploads = 0;
  const client = Object.assign(api, {
    reportStatus: async (_id: string, report: { status: string; error_message?: string }) => {
      statuses.push(report);
      return {} as never;
    },
    uploadPlanArtifact: async () => {
      uploads += 1;
      return spec.upload ? spec.upload() : { job_id: 'j', size: 5, sha256: 'x' };
    },
    uploadPlanChanges: async () => ({ job_id: 'j', size: 5, sha256: 'x' }),
  }) as unknown as TrellisClient;
  const claimed = inlinePlanClaim(spec.files);
  const workDir = spec.workDir ?? join(dir, 'work');
  const runner = testJobRunner(client, claimed, { dir, engineBin: engine, workDir });
  const result = await runner.run();
  return { result, log: api.text(), statuses, uploads, workDir };
}

describe("the control plane's artifact storage is full", () => {
  it('a plan upload answered 507 fails the job at once, saying the storage is full', async () => {
    const { result, statuses, uploads, workDir } = await run({
      upload: async () => {
        throw new TrellisApiError({
          status: 507,
          code: 'insufficient_storage',
          detail: 'artifact storage cannot write the artifact: no space left on device (ENOSPC)',
        });
      },
    });
    expect(result).toBe('FAILED');
    expect(uploads, 'a full store is not retried').toBe(1);
    expect(statuses).toEqual([
      {
        status: 'FAILED',
        error_message: expect.stringMatching(
          /^the control plane's artifact storage is full: the plan \(5 bytes\) was not stored \(507 insufficient_storage: artifact storage cannot write the artifact: no space left on device \(ENOSPC\)\); nothing stored before is lost/,
        ),
      },
    ]);
    expect(readdirSync(workDir)).toEqual([]);
  });

  it("the engine's state write answered 507 fails the job saying the storage is full", async () => {
    const { result, statuses } = await run({
      plan: `printf 'Error: Failed to save state\\n\\nError saving state: HTTP error: 507\\n' >&2; exit 1`,
    });
    expect(result).toBe('FAILED');
    expect(statuses[0]?.error_message).toMatch(
      /^the control plane's artifact storage is full: the engine's state write was refused \(507 insufficient_storage\): Error: Failed to save state/,
    );
  });
});

describe("the agent's work directory is full", () => {
  it('the engine failing to write its plan file fails the job saying the disk is full', async () => {
    const { result, statuses, uploads } = await run({
      // As OpenTofu prints it: a long detail wrapped, here between "left" and "on".
      plan: `printf 'Error: Failed to write plan file\\n\\nThe plan file could not be written: write /var/lib/trellis-agent/work/job-1/src/terraform.plan.out: no space left\\non device.\\n' >&2; exit 1`,
    });
    expect(result).toBe('FAILED');
    expect(uploads).toBe(0);
    expect(statuses[0]?.error_message).toBe(
      "the agent's disk is full: `plan` could not write (no space left on device): Error: Failed to write plan file; free space in the agent's work directory, then run the job again",
    );
  });

  describe.skipIf(!canMountTmpfs)('on a real full disk (a 1 MiB tmpfs; mounting one needs root)', () => {
    let tmpfs: Tmpfs;
    beforeAll(() => {
      tmpfs = mountTmpfs(1024 * 1024, 'trellis-agent-work-');
    });
    afterAll(() => {
      tmpfs?.unmount();
    });

    it("the agent's own write of the source fails the job saying the disk is full, and the workspace is removed", async () => {
      const workDir = join(tmpfs.dir, 'work');
      const { result, statuses } = await run({
        workDir,
        files: { 'main.tf': 'output "x" { value = 1 }\n', 'big.txt': 'x'.repeat(2 * 1024 * 1024) },
      });
      expect(result).toBe('FAILED');
      expect(statuses[0]?.error_message).toMatch(
        new RegExp(
          `^the agent's disk is full: ENOSPC: no space left on device, write; free space in the agent's work directory \\(${workDir}\\), then run the job again$`,
        ),
      );
      expect(readdirSync(workDir)).toEqual([]);
      // The space is back: the next job runs.
      expect((await run({ workDir })).result).toBe('SUCCESS');
    });

    it('a log spool file that fills keeps every chunk, once and in order, in memory, and holds the producer back', async () => {
      const api = new FakeLogApi();
      // The control plane is away for a while: the log piles up past the memory mark.
      api.faults.push('refuse', 'refuse', 'refuse', 'refuse', 'refuse');
      tmpfs.fill(8 * 1024);
      try {
        const ship = new LogShipper({
          api,
          jobId: 'job',
          logger: new AgentLogger('silent'),
          backoff: new Backoff({ initialMs: 1, maxMs: 2 }),
          maxChunkBytes: 1024,
          highWaterBytes: 4 * 1024,
          spoolPath: join(tmpfs.dir, 'log-spool-job'),
        });
        const text = Array.from({ length: 2000 }, (_, i) => `line ${i} of a job log that does not fit\n`).join('');
        for (let at = 0; at < text.length; at += 500) ship.append('STDOUT', text.slice(at, at + 500));
        // Some chunks went to the file before it filled; the rest wait in memory and the engine is held back.
        expect(ship.stats.spooledBytes).toBeGreaterThan(0);
        expect(ship.stats.spooledBytes).toBeLessThan(Buffer.byteLength(text));
        expect(ship.full).toBe(true);
        await ship.close();
        expect(api.text()).toBe(text);
        expect(api.stored.map((chunk) => chunk.id)).toEqual(api.stored.map((_, i) => i + 1));
      } finally {
        tmpfs.free();
      }
    });
  });
});
