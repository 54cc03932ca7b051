/**
 * Issue 27: a remote run of the stock CLI is a PLAN whose snapshot source is an uploaded
 * configuration version. The agent downloads and checks it (strip 0), runs the engine in the
 * workspace's working directory inside it, and passes the PLAN's run options to the engine as one
 * argument each. A claim that names no version for an upload runs nothing.
 */
import { createHash } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClaimAnswer, TrellisClient } from '@trellis/client';
import type { Job, RunOptions } from '@trellis/core';
import { tarGz } from '@trellis/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeLogApi } from '../support/fakeLogApi.js';
import { testJobRunner } from '../support/jobRunner.js';

const VINE = '7a6f3c2e-1d5b-4b8a-9c3d-2e1f0a9b8c7d';
const VERSION = '0b8f5e0c-9a41-4b38-8f0a-6e1d3c2b1a90';
let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-uploaded-run-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const ARCHIVE = tarGz([
  { path: 'main.tf', content: 'output "where" { value = "root" }\n' },
  { path: 'envs/prod/main.tf', content: 'output "where" { value = "prod" }\n' },
]);

async function run(options: { runOptions?: RunOptions; withVersion?: boolean } = {}) {
  const engine = join(dir, 'fake-tofu');
  // Prints each argument of `plan` on its own line, and the configuration it runs.
  writeFileSync(
    engine,
    `#!/bin/sh\ncase "$1" in\n  plan) for a in "$@"; do echo "arg[$a]"; case "$a" in -out=*) echo plan > "\${a#-out=}";; esac; done; cat main.tf;;\n  show) echo '{}';;\nesac\n`,
  );
  chmodSync(engine, 0o755);
  const api = new FakeLogApi();
  const statuses: { status: string; error_message?: string }[] = [];
  const downloads: string[] = [];
  const client = Object.assign(api, {
    reportStatus: async (_id: string, report: { status: string; error_message?: string }) => {
      statuses.push(report);
      return {} as never;
    },
    uploadPlanArtifact: async () => ({ job_id: 'j', size: 5, sha256: 'x' }),
    uploadPlanChanges: async () => ({ job_id: 'j', size: 5, sha256: 'x' }),
    downloadConfigurationVersion: async (url: string) => {
      downloads.push(url);
      return { body: new Blob([ARCHIVE]).stream(), sha256: '' };
    },
  }) as unknown as TrellisClient;
  const job = {
    id: '5d2c9f1e-9d1b-4c39-9a61-0e2b0f2d7c11',
    job_type: 'PLAN',
    vine_id: VINE,
    vineyard_id: null,
    plan_job_id: null,
    config_snapshot: {
      vine: { id: VINE, name: 'infra', project_name: null, vineyard_id: null },
      source: { type: 'upload', configuration_version_id: VERSION, path: 'envs/prod' },
      variables: {},
      engine: null,
      cloud_identity_id: null,
      ...(options.runOptions ? { run_options: options.runOptions } : {}),
    },
    trigger: { type: 'cli' },
  } as unknown as Job;
  const url = `/api/jobs/${job.id}/configuration-versions/${VERSION}`;
  const claimed = {
    job,
    cloud_identity: null,
    state_token: null,
    policies: [],
    vineyard: null,
    configuration_version:
      options.withVersion === false
        ? null
        : {
            id: VERSION,
            sha256: createHash('sha256').update(ARCHIVE).digest('hex'),
            size: ARCHIVE.length,
            url,
            strip_components: 0,
          },
  } as unknown as ClaimAnswer;
  const runner = testJobRunner(client, claimed, { dir, engineBin: engine });
  const result = await runner.run();
  return { result, log: api.text(), statuses, downloads, url };
}

describe('a remote run of an uploaded configuration', () => {
  it('runs exactly the uploaded tarball, in the working directory inside it', async () => {
    const { result, log, downloads, url } = await run();
    expect(result, log).toBe('SUCCESS');
    expect(downloads).toEqual([url]);
    expect(log).toContain(`configuration version ${VERSION} (${ARCHIVE.length} bytes`);
    expect(log).toContain(', path envs/prod');
    expect(log).toContain('value = "prod"');
    expect(log).not.toContain('value = "root"');
    expect(log).not.toContain('arg[-target');
  });

  it('passes -target, -replace and -refresh=false to the plan, one argument each', async () => {
    const { result, log } = await run({
      runOptions: {
        target: ['null_resource.a', 'module.net["eu west"]'],
        replace: ['null_resource.b'],
        refresh: false,
      },
    });
    expect(result, log).toBe('SUCCESS');
    expect(log).toContain('plan: run options -target=null_resource.a');
    expect(log).toContain('arg[-target=null_resource.a]');
    expect(log).toContain('arg[-target=module.net["eu west"]]');
    expect(log).toContain('arg[-replace=null_resource.b]');
    expect(log).toContain('arg[-refresh=false]');
    expect(log).not.toContain('arg[-refresh-only]');
  });

  it('plans refresh-only when asked', async () => {
    const { result, log } = await run({ runOptions: { refresh_only: true } });
    expect(result, log).toBe('SUCCESS');
    expect(log).toContain('arg[-refresh-only]');
  });

  it('runs nothing when the claim names no configuration version for the upload', async () => {
    const { result, statuses, log, downloads } = await run({ withVersion: false });
    expect(result).toBe('FAILED');
    expect(statuses.at(-1)?.error_message).toMatch(
      /uploaded configuration but its claim names no configuration version/,
    );
    expect(downloads).toEqual([]);
    expect(log).not.toContain('arg[plan]');
  });
});
