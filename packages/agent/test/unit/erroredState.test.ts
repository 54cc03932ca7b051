/**
 * The agent keeps the final state its engine could not store (issue 30): `errored.tfstate` is
 * pushed with the job's state token, retried while the control plane is unreachable, and kept on
 * disk when it cannot be pushed.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RetryClock, TrellisApiError, type TrellisClient, TrellisConnectionError } from '@trellis/client';
import { afterEach, describe, expect, it } from 'vitest';
import { ERRORED_STATE_FILE, pushErroredState } from '../../src/job/erroredState.js';
import { AgentLogger } from '../../src/logging/AgentLogger.js';

/** Time that passes at once: each wait moves it on by the wait. */
function instantClock(): RetryClock {
  let now = 0;
  return {
    now: () => new Date(now),
    sleep: async (ms: number) => {
      now += ms;
      return true;
    },
  };
}

type Write = (vineId: string, state: Uint8Array, credentials: { username: string; password: string }) => Promise<void>;

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function setUp(writeState: Write, withFile = true) {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-errored-state-'));
  dirs.push(dir);
  if (withFile) writeFileSync(join(dir, ERRORED_STATE_FILE), '{"version":4,"serial":3,"lineage":"L"}');
  const push = () =>
    pushErroredState(
      {
        client: { writeState } as unknown as TrellisClient,
        logger: new AgentLogger('silent'),
        clock: instantClock(),
        timeoutMs: 60_000,
      },
      { dir, vineId: 'vine-1', jobId: 'job-1', workerId: 'worker-1', stateToken: 'tst_job', keepDir: dir },
    );
  return { dir, push };
}

describe('the errored state', () => {
  it('is pushed with the job’s state token, retried while the control plane cannot be reached', async () => {
    const calls: { vineId: string; state: string; username: string; password: string }[] = [];
    const { push } = setUp(async (vineId, state, credentials) => {
      calls.push({ vineId, state: Buffer.from(state).toString(), ...credentials });
      if (calls.length < 3) throw new TrellisConnectionError('http://trellis', new Error('ECONNREFUSED'));
    });
    expect(await push()).toBe('stored');
    expect(calls).toHaveLength(3);
    expect(calls[2]).toEqual({
      vineId: 'vine-1',
      state: '{"version":4,"serial":3,"lineage":"L"}',
      username: 'worker-1',
      password: 'tst_job',
    });
  });

  it('is left alone when the engine stored its state', async () => {
    const { push } = setUp(async () => {
      throw new Error('not called');
    }, false);
    expect(await push()).toBe('none');
  });

  it('is a rejected version when a later job had the configuration', async () => {
    const { push } = setUp(async () => {
      throw new TrellisApiError({ status: 409, code: 'state_rejected', detail: 'kept as rejected version 4' });
    });
    expect(await push()).toBe('rejected');
  });

  it('is kept outside the workspace when the control plane refuses it', async () => {
    const { dir, push } = setUp(async () => {
      throw new TrellisApiError({ status: 403, code: 'state_not_for_worker', detail: 'no' });
    });
    expect(await push()).toBe('kept');
    expect(existsSync(join(dir, ERRORED_STATE_FILE))).toBe(false);
    expect(readFileSync(join(dir, 'errored-job-1.tfstate'), 'utf8')).toContain('"serial":3');
  });

  it("is kept at once when the control plane's artifact storage is full (507): no retry while nothing changes", async () => {
    let calls = 0;
    const { dir, push } = setUp(async () => {
      calls += 1;
      throw new TrellisApiError({ status: 507, code: 'insufficient_storage', detail: 'artifact storage is full' });
    });
    expect(await push()).toBe('kept');
    expect(calls).toBe(1);
    expect(readFileSync(join(dir, 'errored-job-1.tfstate'), 'utf8')).toContain('"serial":3');
  });
});
