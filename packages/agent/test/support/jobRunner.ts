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
