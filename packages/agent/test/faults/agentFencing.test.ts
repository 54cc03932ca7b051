/**
 * Fault scenario 1b (issue 30): an agent that fences itself. Cut off from the control plane in
 * the middle of an apply (its connections refused) for longer than the lost-job timeout, the
 * agent fences itself once most of that timeout has passed without an answered heartbeat: it
 * claims nothing (a job queued during the cut waits for it, though it has a free slot), starts no
 * engine command, and lets the running apply go on. When the link heals it resumes; learning
 * that its job was failed as lost, it still lets the apply run to its end, whose state is stored
 * as `after_lost`. The invariant checker finds nothing orphaned, doubled or unaudited.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, logText, TOFU, waitForJob } from '../support/e2e.js';
import { type FaultRig, startFaultRig, TOXIPROXY, violationsOf } from './rig.js';

/** Lost after 6 s of silence, swept every second: the agent fences itself after 4 s. */
const SETTINGS = { TRELLIS_LOST_JOB_TIMEOUT_S: '6', TRELLIS_SWEEP_INTERVAL_S: '1', TRELLIS_HEARTBEAT_TIMEOUT_S: '6' };

interface LogLine {
  msg: string;
  job_id?: string;
  [field: string]: unknown;
}

/** The agent's log, a JSON object a line. */
function logLines(output: string): LogLine[] {
  const lines: LogLine[] = [];
  for (const line of output.split('\n')) {
    try {
      const parsed = JSON.parse(line) as LogLine;
      if (typeof parsed.msg === 'string') lines.push(parsed);
    } catch {
      // not a log line
    }
  }
  return lines;
}

const indexOf = (lines: LogLine[], match: (line: LogLine) => boolean) => lines.findIndex(match);

describe.skipIf(!TOFU || !TOXIPROXY)('fault scenario 1b: an agent fences itself when cut off mid-apply', () => {
  let rig: FaultRig;

  beforeAll(async () => {
    rig = await startFaultRig(SETTINGS);
  }, 120_000);

  afterAll(async () => {
    await rig?.stop();
  });

  it('claims nothing while fenced, lets the apply of its lost job finish, stores its state as after_lost', {
    timeout: 300_000,
  }, async () => {
    const { server, proxy } = rig;
    // Two slots: one runs the apply, the other would claim if the agent did not fence itself.
    const agent = await rig.startAgent('fenced', { args: ['--concurrency', '2'] });
    const vine = await rig.ledgerVine('fenced-apply', { seconds: '40' });
    const other = await rig.ledgerVine('queued-during-cut');
    const job = await server.user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id });
    await eventually(
      `job ${job.id} to be applying`,
      async () => ((await logText(server, job.id)).includes('progress 2/') ? true : undefined),
      120_000,
    );

    await proxy.disable();
    await eventually('the agent to fence itself', () =>
      logLines(agent.output()).some((line) => line.msg.startsWith('fenced:')) ? true : undefined,
    );
    const failed = await waitForJob(server, job.id);
    expect(failed.error_message).toContain('the agent running this job was lost');
    // A job queued while the agent is cut off and fenced: nothing of this agent takes it.
    const queued = await server.user.createJob({ job_type: 'DEPLOY', configuration_id: other.id });
    expect((await server.user.getJob(queued.id)).status).toBe('QUEUED');
    expect(logLines(agent.output()).some((line) => line.job_id === queued.id)).toBe(false);
    await proxy.enable();

    // Healed: the agent resumes and runs the queued job, only after it said so.
    const second = await waitForJob(server, queued.id);
    expect(second.status).toBe('SUCCESS');
    const lines = logLines(agent.output());
    const fenced = indexOf(lines, (line) => line.msg.startsWith('fenced:'));
    const resumed = indexOf(lines, (line) => line.msg.startsWith('fence lifted:'));
    const started = indexOf(lines, (line) => line.msg === 'job started' && line.job_id === queued.id);
    expect(fenced).toBeGreaterThanOrEqual(0);
    expect(resumed).toBeGreaterThan(fenced);
    expect(started).toBeGreaterThan(resumed);

    // The lost job's apply ran to its end: its state is the vine's, marked after_lost.
    const late = await eventually(
      'the late state',
      async () => (await server.user.stateHistory(vine.id)).state_after_lost ?? undefined,
      120_000,
    );
    expect(late).toMatchObject({ job_id: job.id, rejected: false });
    const ended = await eventually('the agent to end the lost job', () =>
      logLines(agent.output()).find((line) => line.msg.startsWith('job lost') && line.job_id === job.id),
    );
    // Its provisioner's work ended (an interrupted apply leaves a `begin` without an `end`).
    expect(readFileSync(vine.ledger, 'utf8')).toMatch(/^end /m);
    expect(ended).toMatchObject({ apply_finished: true });
    expect(
      logLines(agent.output()).some(
        (line) =>
          line.job_id === job.id && line.msg.startsWith('the control plane ended the job while the engine applies'),
      ),
    ).toBe(true);

    const violations = await rig.check();
    expect(violations, violationsOf(violations)).toEqual([]);
  });
});
