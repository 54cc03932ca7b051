/**
 * Issue 23: a job of a connected vine runs the configuration version its claim names. The agent
 * downloads it with its own credentials, refuses bytes whose sha256 is not the claim's, unpacks it
 * (never a link out of the workspace), and runs exactly it; no provider token is involved.
 */
import { createHash } from 'node:crypto';
import { chmodSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClaimAnswer, TrellisClient } from '@trellis/client';
import type { Job } from '@trellis/core';
import { tarGz } from '@trellis/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeLogApi } from '../support/fakeLogApi.js';
import { testJobRunner } from '../support/jobRunner.js';

const COMMIT = '8457785ada4ab6182c16fbac60586081edf51999';
const VINE = '7a6f3c2e-1d5b-4b8a-9c3d-2e1f0a9b8c7d';
const VERSION = '0b8f5e0c-9a41-4b38-8f0a-6e1d3c2b1a90';
let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-configuration-version-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

async function run(archive: Buffer, claimedSha256?: string) {
  const engine = join(dir, 'fake-tofu');
  // Shows the configuration it was given, writes a plan.
  writeFileSync(
    engine,
    `#!/bin/sh\ncase "$1" in\n  plan) cat main.tf; ls -a; for a in "$@"; do case "$a" in -out=*) echo plan > "\${a#-out=}";; esac; done;;\n  show) echo '{}';;\nesac\n`,
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
      return { body: new Blob([archive]).stream(), sha256: '' };
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
      // An address the agent could never clone: the configuration comes from the control plane.
      source: { type: 'git', url: 'https://git.invalid/ada/infra.git', ref: 'main', path: 'stack', commit: COMMIT },
      variables: {},
      engine: null,
      cloud_identity_id: null,
    },
    trigger: { type: 'manual' },
  } as unknown as Job;
  const url = `/api/jobs/${job.id}/configuration-versions/${VERSION}`;
  const claimed = {
    job,
    cloud_identity: null,
    state_token: null,
    policies: [],
    vineyard: null,
    configuration_version: {
      id: VERSION,
      sha256: claimedSha256 ?? createHash('sha256').update(archive).digest('hex'),
      size: archive.length,
      url,
      strip_components: 1,
    },
  } as unknown as ClaimAnswer;
  const workDir = join(dir, 'work');
  const runner = testJobRunner(client, claimed, { dir, engineBin: engine, workDir });
  const result = await runner.run();
  return { result, log: api.text(), statuses, downloads, url, workDir };
}

const ARCHIVE = tarGz([
  { path: 'ada-infra-8457785/', type: 'directory' },
  { path: 'ada-infra-8457785/stack/main.tf', content: 'output "commit" { value = "pinned" }\n' },
  { path: 'ada-infra-8457785/stack/shared', type: 'symlink', linkpath: '../modules' },
  { path: 'ada-infra-8457785/modules/net.tf', content: '' },
]);

describe('a job of a connected vine', () => {
  it('downloads the claim’s configuration version, checks its sha256 and runs exactly it', async () => {
    const { result, log, downloads, url, workDir } = await run(ARCHIVE);
    expect(result, log).toBe('SUCCESS');
    expect(downloads).toEqual([url]);
    expect(log).toContain(`configuration version ${VERSION}, commit ${COMMIT}`);
    expect(log).toContain('value = "pinned"');
    expect(log).toContain('shared');
    expect(log).not.toContain('git.invalid');
    expect(readdirSync(workDir)).toEqual([]);
  });

  it('refuses bytes that are not the ones the claim names, and runs nothing', async () => {
    const { result, statuses, log } = await run(ARCHIVE, 'f'.repeat(64));
    expect(result).toBe('FAILED');
    expect(statuses.at(-1)?.error_message).toMatch(/is not the one the claim names/);
    expect(log).not.toContain('value = "pinned"');
  });

  it('never unpacks a link out of the workspace, even from a tarball the server should have refused', async () => {
    const evil = tarGz([
      { path: 'ada-infra-8457785/stack/main.tf', content: 'output "x" { value = 1 }\n' },
      { path: 'ada-infra-8457785/stack/creds', type: 'symlink', linkpath: '../../../../home' },
    ]);
    const { result, statuses } = await run(evil);
    expect(result).toBe('FAILED');
    expect(statuses.at(-1)?.error_message).toMatch(/does not unpack: .*creds \(SymbolicLink\)/);
  });
});
