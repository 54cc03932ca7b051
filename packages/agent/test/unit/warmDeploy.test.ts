/**
 * Issue 31: a DEPLOY of a plan this agent ran runs in that plan's kept workspace: no second
 * download of the configuration or of the plan, no `init`, the kept plan file applied. Anything
 * that does not match (another configuration hash, a plan file changed on disk, another plan, a
 * kept workspace past its time) runs cold as before. A kept workspace holds the source alone: the
 * variables files and the engine's CLI configuration are gone once the plan ends.
 */
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClaimAnswer, TrellisClient } from '@trellis/client';
import type { Job } from '@trellis/core';
import { tarGz } from '@trellis/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WARM_KEEP_MS, WarmWorkspaces } from '../../src/job/WarmWorkspaces.js';
import { FakeLogApi } from '../support/fakeLogApi.js';
import { testJobRunner } from '../support/jobRunner.js';

const VINE = '7a6f3c2e-1d5b-4b8a-9c3d-2e1f0a9b8c7d';
const VERSION = '0b8f5e0c-9a41-4b38-8f0a-6e1d3c2b1a90';
const PLAN_ID = '5d2c9f1e-9d1b-4c39-9a61-0e2b0f2d7c11';
const DEPLOY_ID = '9e3a1b2c-4d5e-4f60-8a7b-1c2d3e4f5a6b';
const HASH = 'a'.repeat(64);
const SECRET = 'hunter2-sensitive-value';
const ARCHIVE = tarGz([{ path: 'infra/main.tf', content: 'output "x" { value = 1 }\n' }]);
const PLAN_BYTES = 'the-plan-file\n';

let dir: string;
let engine: string;
let commandsFile: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-warm-deploy-'));
  engine = join(dir, 'fake-tofu');
  commandsFile = join(dir, 'commands');
  // Records each command it ran with its working directory; `plan -out=FILE` writes the plan file.
  writeFileSync(
    engine,
    `#!/bin/sh
echo "$1 $(pwd)" >> "${commandsFile}"
case "$1" in
  init) mkdir -p .terraform; echo lock > .terraform.lock.hcl;;
  plan) for a in "$@"; do case "$a" in -out=*) printf '${PLAN_BYTES.replace('\n', '\\n')}' > "\${a#-out=}";; esac; done;;
  show) echo '{}';;
  output) echo '{}';;
esac
`,
  );
  chmodSync(engine, 0o755);
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

type Calls = { configurations: number; plans: number; statuses: { status: string; error_message?: string }[] };

/** A pretend control plane for one job (its own log), counting in `calls` what the agent downloaded. */
function controlPlane(calls: Calls = { configurations: 0, plans: 0, statuses: [] }) {
  const api = new FakeLogApi();
  const client = Object.assign(api, {
    reportStatus: async (_id: string, report: { status: string; error_message?: string }) => {
      calls.statuses.push(report);
      return {} as never;
    },
    uploadPlanArtifact: async (_id: string, bytes: Uint8Array) => ({
      job_id: PLAN_ID,
      size: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    }),
    uploadPlanChanges: async () => ({ job_id: PLAN_ID, size: 5, sha256: 'x' }),
    downloadConfigurationVersion: async () => {
      calls.configurations += 1;
      return { body: new Blob([ARCHIVE]).stream(), sha256: '' };
    },
    downloadPlanArtifact: async () => {
      calls.plans += 1;
      return {
        body: new Blob([PLAN_BYTES]).stream(),
        size: PLAN_BYTES.length,
        sha256: createHash('sha256').update(PLAN_BYTES).digest('hex'),
      };
    },
  }) as unknown as TrellisClient;
  return { api, calls, client };
}

function claim(over: Partial<Job>): ClaimAnswer {
  const job = {
    id: PLAN_ID,
    job_type: 'PLAN',
    vine_id: VINE,
    vineyard_id: null,
    plan_job_id: null,
    config_hash: HASH,
    config_snapshot: {
      vine: { id: VINE, name: 'infra', project_name: null, vineyard_id: null },
      source: { type: 'upload', configuration_version_id: VERSION, path: null },
      variables: { password: { value: SECRET, sensitive: true } },
      engine: null,
      cloud_identity_id: null,
    },
    trigger: { type: 'manual' },
    ...over,
  } as unknown as Job;
  return {
    job,
    cloud_identity: null,
    state_token: null,
    policies: [],
    vineyard: null,
    configuration_version: {
      id: VERSION,
      sha256: createHash('sha256').update(ARCHIVE).digest('hex'),
      size: ARCHIVE.length,
      url: `/api/jobs/${job.id}/configuration-versions/${VERSION}`,
      strip_components: 1,
    },
  } as unknown as ClaimAnswer;
}

const commands = () =>
  readFileSync(commandsFile, 'utf8')
    .trim()
    .split('\n')
    .map((line) => line.split(' ')[0]);

/** Runs the PLAN, then `deploy` (a DEPLOY of that plan unless it says otherwise), on one agent. */
async function planThenDeploy(warm: WarmWorkspaces, deploy: Partial<Job> = {}, between?: () => void) {
  const plane = controlPlane();
  const deployPlane = controlPlane(plane.calls);
  const workDir = join(dir, 'work');
  const plan = await testJobRunner(plane.client, claim({}), { dir, engineBin: engine, workDir, warm }).run();
  const planCommands = commands();
  const keptEntries = readdirSync(workDir).flatMap((entry) => readdirSync(join(workDir, entry)));
  between?.();
  const deployed = await testJobRunner(
    deployPlane.client,
    claim({ id: DEPLOY_ID, job_type: 'DEPLOY', plan_job_id: PLAN_ID, ...deploy }),
    { dir, engineBin: engine, workDir, warm },
  ).run();
  return {
    plan,
    deployed,
    planCommands,
    deployCommands: commands().slice(planCommands.length),
    keptEntries,
    calls: plane.calls,
    log: plane.api.text() + deployPlane.api.text(),
    workDir,
  };
}

describe('a DEPLOY of a plan this agent ran and kept', () => {
  it('runs warm: no second download of the configuration nor of the plan, no init; the kept plan is applied', async () => {
    const warm = new WarmWorkspaces();
    const run = await planThenDeploy(warm);
    expect(run.plan, run.log).toBe('SUCCESS');
    expect(run.deployed, run.log).toBe('SUCCESS');
    expect(run.planCommands).toEqual(['init', 'plan', 'show']);
    expect(run.deployCommands).toEqual(['apply', 'output']);
    expect(run.calls.configurations).toBe(1);
    expect(run.calls.plans).toBe(0);
    expect(run.log).toContain('init: skipped');
    // The DEPLOY ran where the plan ran.
    const cwds = readFileSync(commandsFile, 'utf8')
      .trim()
      .split('\n')
      .map((line) => line.split(' ')[1]);
    expect(new Set(cwds).size).toBe(1);
    // Kept: the source alone (no variables file, no CLI configuration); nothing left after the DEPLOY.
    expect(run.keptEntries).toEqual(['src']);
    expect(warm.size).toBe(0);
    expect(readdirSync(run.workDir)).toEqual([]);
  });

  it('keeps nothing with the sensitive values of the variables in it', async () => {
    const warm = new WarmWorkspaces();
    const plane = controlPlane();
    const workDir = join(dir, 'work');
    expect(await testJobRunner(plane.client, claim({}), { dir, engineBin: engine, workDir, warm }).run()).toBe(
      'SUCCESS',
    );
    expect(warm.size).toBe(1);
    const files = (root: string): string[] =>
      readdirSync(root, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory() ? files(join(root, entry.name)) : [join(root, entry.name)],
      );
    for (const file of files(workDir)) expect(readFileSync(file, 'utf8'), file).not.toContain(SECRET);
    warm.clear();
    expect(readdirSync(workDir)).toEqual([]);
  });

  it('runs cold when the configuration hash differs from the plan’s', async () => {
    const run = await planThenDeploy(new WarmWorkspaces(), { config_hash: 'b'.repeat(64) });
    expect(run.deployed, run.log).toBe('SUCCESS');
    expect(run.deployCommands).toEqual(['init', 'apply', 'output']);
    expect(run.calls.configurations).toBe(2);
    expect(run.calls.plans).toBe(1);
    expect(readdirSync(run.workDir)).toEqual([]);
  });

  it('runs cold when the kept plan file changed on disk', async () => {
    const workDir = join(dir, 'work');
    const run = await planThenDeploy(new WarmWorkspaces(), {}, () => {
      const [workspace] = readdirSync(workDir);
      writeFileSync(join(workDir, workspace as string, 'src', 'terraform.plan.out'), 'tampered');
    });
    expect(run.deployed, run.log).toBe('SUCCESS');
    expect(run.deployCommands).toEqual(['init', 'apply', 'output']);
    expect(run.calls.plans).toBe(1);
  });

  it('runs cold for a DEPLOY of another plan, and drops the kept one', async () => {
    const warm = new WarmWorkspaces();
    const run = await planThenDeploy(warm, { plan_job_id: '11111111-2222-4333-8444-555555555555' });
    expect(run.deployCommands).toEqual(['init', 'apply', 'output']);
    expect(warm.size).toBe(0);
    expect(readdirSync(run.workDir)).toEqual([]);
  });

  it('runs cold once the kept workspace is past its time', async () => {
    let now = 0;
    const run = await planThenDeploy(new WarmWorkspaces({ now: () => new Date(now) }), {}, () => {
      now += WARM_KEEP_MS;
    });
    expect(run.deployCommands).toEqual(['init', 'apply', 'output']);
    expect(run.calls.configurations).toBe(2);
    expect(existsSync(run.workDir) && readdirSync(run.workDir)).toEqual([]);
  });
});
