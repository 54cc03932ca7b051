/**
 * Issue 29: a PLAN job uploads its change document after its plan file, masking on the agent
 * every string that holds a secret of the job (here a sensitive variable the plan does not mark);
 * a control plane older than change documents (`404 route_not_found`), or one that refuses the
 * document, keeps the plan without one.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TrellisApiError, type TrellisClient } from '@trellis/client';
import type { PlanChanges } from '@trellis/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeLogApi } from '../support/fakeLogApi.js';
import { inlinePlanClaim, testJobRunner } from '../support/jobRunner.js';

const SECRET = 'unmarked-secret-value-42';
let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-plan-changes-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** `show -json` of a plan whose provider forgot to mark the secret it was given. */
const SHOWN_PLAN = JSON.stringify({
  resource_changes: [
    {
      address: 'terraform_data.x',
      type: 'terraform_data',
      name: 'x',
      change: {
        actions: ['create'],
        before: null,
        after: { input: SECRET, label: 'plain' },
        after_unknown: { id: true },
        after_sensitive: {},
      },
    },
  ],
});

async function run(uploadChanges: (document: PlanChanges) => Promise<unknown>) {
  const engine = join(dir, 'fake-tofu');
  writeFileSync(join(dir, 'plan.json'), SHOWN_PLAN);
  writeFileSync(
    engine,
    `#!/bin/sh\ncase "$1" in\n  plan) for a in "$@"; do case "$a" in -out=*) echo plan > "\${a#-out=}";; esac; done;;\n  show) cat '${join(dir, 'plan.json')}';;\nesac\n`,
  );
  chmodSync(engine, 0o755);
  const api = new FakeLogApi();
  const calls: string[] = [];
  const statuses: { status: string; error_message?: string }[] = [];
  const client = Object.assign(api, {
    reportStatus: async (_id: string, report: { status: string; error_message?: string }) => {
      statuses.push(report);
      return {} as never;
    },
    uploadPlanArtifact: async () => {
      calls.push('plan file');
      return { job_id: 'j', size: 5, sha256: 'x' };
    },
    uploadPlanChanges: async (_id: string, document: PlanChanges) => {
      calls.push('changes');
      return uploadChanges(document);
    },
  }) as unknown as TrellisClient;
  const claimed = inlinePlanClaim(
    { 'main.tf': 'variable "token" {}\n' },
    { token: { value: SECRET, sensitive: true } },
  );
  const result = await testJobRunner(client, claimed, { dir, engineBin: engine }).run();
  return { result, calls, statuses, log: api.text() };
}

describe("a PLAN's change document", () => {
  it('is uploaded after the plan file, a secret of the job masked even where the plan does not mark it', async () => {
    const uploaded: PlanChanges[] = [];
    const { result, calls, log } = await run(async (document) => {
      uploaded.push(document);
      return { job_id: 'j', size: 321, sha256: 'y' };
    });
    expect(result, log).toBe('SUCCESS');
    expect(calls).toEqual(['plan file', 'changes']);
    expect(JSON.stringify(uploaded)).not.toContain(SECRET);
    expect(uploaded[0]?.resource_changes[0]?.attributes).toEqual([
      { path: 'input', after: { sensitive: true } },
      { path: 'label', after: { value: 'plain' } },
      { path: 'id', after: { unknown: true } },
    ]);
    expect(log).toContain('plan changes uploaded: 1 resource(s), 0 output(s), sensitive values masked (321 bytes)');
    expect(log).not.toContain(SECRET);
  });

  it('is skipped, the plan kept, by a control plane that keeps no change documents', async () => {
    const { result, log } = await run(async () => {
      throw new TrellisApiError({ status: 404, code: 'route_not_found', detail: 'no route for PUT …' });
    });
    expect(result, log).toBe('SUCCESS');
    expect(log).toContain('this control plane keeps no change documents');
  });

  it('is left out, the plan kept, when the control plane refuses the document', async () => {
    const { result, log } = await run(async () => {
      throw new TrellisApiError({ status: 400, code: 'validation_failed', detail: 'the document is malformed' });
    });
    expect(result, log).toBe('SUCCESS');
    expect(log).toContain(
      'plan changes: the control plane refused the change document (400 validation_failed: the document is malformed); the plan has none',
    );
  });

  it('fails the job when the job is no longer this agent’s to report on', async () => {
    const { result, statuses } = await run(async () => {
      throw new TrellisApiError({
        status: 403,
        code: 'job_not_claimed_by_worker',
        detail: 'not claimed by this worker',
      });
    });
    expect(result).toBe('FAILED');
    expect(statuses.at(-1)?.error_message).toContain('not claimed by this worker');
  });
});
