/**
 * Issue 31: a job's final report carries the agent's next claim when the agent takes one
 * (`claim_next`); the job in its answer goes to the claim loop (`NextClaim`). A report retried
 * after a connection failure may have been taken with its claim, so the loop is told.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ClaimAnswer, type TrellisClient, TrellisConnectionError } from '@trellis/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NextClaim } from '../../src/daemon/NextClaim.js';
import { FakeLogApi } from '../support/fakeLogApi.js';
import { inlinePlanClaim, testJobRunner } from '../support/jobRunner.js';

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-next-claim-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const NEXT = { job: { id: 'a9e1b6d2-3c4f-4a5b-8c7d-0e1f2a3b4c5d' }, cloud_identity: null } as unknown as ClaimAnswer;

/** Runs a PLAN whose reports are answered by `answers` in turn (an Error is thrown). */
async function run(answers: Array<Error | Record<string, unknown>>, nextClaim: NextClaim | undefined) {
  const engine = join(dir, 'fake-tofu');
  writeFileSync(
    engine,
    `#!/bin/sh\ncase "$1" in\n  plan) for a in "$@"; do case "$a" in -out=*) echo plan > "\${a#-out=}";; esac; done;;\n  show) echo '{}';;\nesac\n`,
  );
  chmodSync(engine, 0o755);
  const reports: Array<{ status: string; claimNext: readonly string[] | undefined }> = [];
  const client = Object.assign(new FakeLogApi(), {
    reportStatus: async (_id: string, report: { status: string }, options: { claimNext?: readonly string[] } = {}) => {
      reports.push({ status: report.status, claimNext: options.claimNext });
      const answer = answers.shift() ?? {};
      if (answer instanceof Error) throw answer;
      return answer;
    },
    uploadPlanArtifact: async () => ({ job_id: 'j', size: 5, sha256: 'x' }),
    uploadPlanChanges: async () => ({ job_id: 'j', size: 5, sha256: 'x' }),
  }) as unknown as TrellisClient;
  const claimed = inlinePlanClaim();
  const runner = testJobRunner(client, claimed, { dir, engineBin: engine, ...(nextClaim ? { nextClaim } : {}) });
  return { result: await runner.run(), reports };
}

/** A claim loop's `NextClaim` that records what it was told. */
function recorder(features: readonly string[] | null) {
  const ends: Array<{ claimed: ClaimAnswer | null; mayBeLost: boolean }> = [];
  let begun = 0;
  const nextClaim: NextClaim = {
    begin: () => {
      begun += 1;
      return features;
    },
    end: (claimed, mayBeLost) => {
      ends.push({ claimed, mayBeLost });
    },
  };
  return { nextClaim, ends, begun: () => begun };
}

describe("a job's final report and the agent's next claim", () => {
  it('asks for the next job with the final report and hands the answer to the claim loop', async () => {
    const loop = recorder(['upload_source']);
    const { result, reports } = await run([{ status: 'SUCCESS', next_claim: NEXT }], loop.nextClaim);
    expect(result).toBe('SUCCESS');
    expect(reports).toEqual([{ status: 'SUCCESS', claimNext: ['upload_source'] }]);
    expect(loop.ends).toEqual([{ claimed: NEXT, mayBeLost: false }]);
  });

  it('asks for nothing when the loop takes no next job, or when there is no loop', async () => {
    const loop = recorder(null);
    const declined = await run([{ status: 'SUCCESS', next_claim: null }], loop.nextClaim);
    expect(declined.reports).toEqual([{ status: 'SUCCESS', claimNext: undefined }]);
    expect([loop.begun(), loop.ends]).toEqual([1, []]);
    const alone = await run([{ status: 'SUCCESS' }], undefined);
    expect(alone.reports).toEqual([{ status: 'SUCCESS', claimNext: undefined }]);
  });

  it('says the claim may have been lost when a request of the report failed on the way', async () => {
    const loop = recorder(['upload_source']);
    const broken = new TrellisConnectionError('http://x', new Error('UND_ERR_SOCKET'));
    const { result, reports } = await run([broken, { status: 'SUCCESS', next_claim: null }], loop.nextClaim);
    expect(result).toBe('SUCCESS');
    expect(reports.map((report) => report.claimNext)).toEqual([['upload_source'], ['upload_source']]);
    expect(loop.ends).toEqual([{ claimed: null, mayBeLost: true }]);
  });
});
