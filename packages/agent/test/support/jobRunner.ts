import { join } from 'node:path';
import type { ClaimAnswer, TrellisClient } from '@trellis/client';
import type { NextClaim } from '../../src/daemon/NextClaim.js';
import { JobRunner } from '../../src/job/JobRunner.js';
import type { WarmWorkspaces } from '../../src/job/WarmWorkspaces.js';
import { AgentLogger } from '../../src/logging/AgentLogger.js';

/**
 * A `JobRunner` as the agent makes one, for the unit tests that run a claimed job end to end
 * against a pretend control plane (`client`) and an engine script: no cloud identity, short
 * grace and log intervals, `dir` as HOME and its `work` as the work dir unless `workDir` says.
 */
export function testJobRunner(
  client: TrellisClient,
  claimed: ClaimAnswer,
  options: { dir: string; engineBin: string; workDir?: string; warm?: WarmWorkspaces; nextClaim?: NextClaim },
): JobRunner {
  return new JobRunner(
    {
      client,
      settings: {
        serverUrl: 'https://trellis.example.test',
        workerId: 'worker-1',
        workerToken: 'worker-token-0123456789',
        workDir: options.workDir ?? join(options.dir, 'work'),
        engineBin: options.engineBin,
        graceMs: 1000,
        lockTimeoutS: 5,
        logIntervalMs: 50,
        hostEnv: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: options.dir },
      },
      logger: new AgentLogger('silent'),
      assumeRole: async () => {
        throw new Error('no identity');
      },
      ...(options.warm ? { warm: options.warm } : {}),
      ...(options.nextClaim ? { nextClaim: options.nextClaim } : {}),
    },
    claimed,
  );
}

/** The vine of `inlinePlanClaim`'s job. */
export const INLINE_PLAN_VINE = '7a6f3c2e-1d5b-4b8a-9c3d-2e1f0a9b8c7d';

/**
 * The claim of a manual PLAN of an inline configuration (`files`, with `variables`), as the
 * control plane answers it to an agent: no identity, no state token, no policies.
 */
export function inlinePlanClaim(
  files: Record<string, string> = { 'main.tf': 'output "x" { value = 1 }\n' },
  variables: Record<string, { value: string; sensitive: boolean }> = {},
): ClaimAnswer {
  const job = {
    id: '5d2c9f1e-9d1b-4c39-9a61-0e2b0f2d7c11',
    job_type: 'PLAN',
    vine_id: INLINE_PLAN_VINE,
    vineyard_id: null,
    plan_job_id: null,
    config_snapshot: {
      vine: { id: INLINE_PLAN_VINE, name: 'infra', project_name: null, vineyard_id: null },
      source: { type: 'inline', files },
      variables,
      engine: null,
      cloud_identity_id: null,
    },
    trigger: { type: 'manual' },
  };
  return { job, cloud_identity: null, state_token: null, policies: [], vineyard: null } as unknown as ClaimAnswer;
}
