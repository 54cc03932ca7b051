import {
  Backoff,
  type HeartbeatAnswerView as HeartbeatAnswer,
  TrellisApiError,
  type TrellisClient,
  TrellisConnectionError,
} from '@trellis/client';
import type { ClaimedJob, Job } from '@trellis/core';
import { describe, expect, it } from 'vitest';
import { Agent, FENCED_HEARTBEAT_MS } from '../../src/daemon/Agent.js';
import type { NextClaim } from '../../src/daemon/NextClaim.js';
import type { JobOutcome, JobRunner, StopReason } from '../../src/job/JobRunner.js';
import { AgentLogger } from '../../src/logging/AgentLogger.js';
import { ManualClock, tick } from '../support/manualClock.js';

type ClaimStep = ClaimedJob | null | Error | Promise<ClaimedJob | null>;

/** The agent protocol as the daemon sees it, scripted. */
class ScriptedClient {
  readonly baseUrl = 'http://control-plane.test';
  heartbeats: string[] = [];
  /** Each heartbeat's `running_job_ids` (undefined: none sent). */
  running: Array<readonly string[] | undefined> = [];
  /** Each heartbeat's `after_unanswered_claim`. */
  afterUnansweredClaim: boolean[] = [];
  /** Each heartbeat's own timeout (undefined: the client's). */
  timeouts: Array<number | undefined> = [];
  /** How many claims each heartbeat came after. */
  claimsBefore: number[] = [];
  claims = 0;
  heartbeatAnswers: Array<HeartbeatAnswer | Error> = [];
  constructor(private readonly steps: ClaimStep[]) {}

  async heartbeat(
    version: string,
    running?: readonly string[],
    options: { afterUnansweredClaim?: boolean; timeoutMs?: number } = {},
  ): Promise<HeartbeatAnswer> {
    this.heartbeats.push(version);
    this.running.push(running);
    this.afterUnansweredClaim.push(options.afterUnansweredClaim === true);
    this.timeouts.push(options.timeoutMs);
    this.claimsBefore.push(this.claims);
    const next = this.heartbeatAnswers.shift() ?? { cancel_job_ids: [], heartbeat_interval_s: 30 };
    if (next instanceof Error) throw next;
    return next;
  }

  async claimJob(options: { signal?: AbortSignal }): Promise<ClaimedJob | null> {
    this.claims += 1;
    const step = this.steps.shift();
    if (step instanceof Error) throw step;
    if (step !== undefined) return step;
    // Nothing scripted: a long poll that ends when the agent stops.
    return new Promise((_, reject) => options.signal?.addEventListener('abort', () => reject(new Error('aborted'))));
  }
}

/** A runner that runs until released or stopped. */
class FakeRunner {
  stopped: StopReason | null = null;
  private finish!: (outcome: JobOutcome) => void;
  readonly done = new Promise<JobOutcome>((resolve) => {
    this.finish = resolve;
  });
  constructor(
    readonly job: Job,
    private readonly nextClaim?: NextClaim,
  ) {}
  /**
   * Ends with a final report that asks for the next job when the agent takes one (as JobRunner's
   * does), answered with `next`; `mayBeLost`: a request of the report failed on the way. The
   * features it was asked with, or null when the agent took no next job.
   */
  reportAndSucceed(next: ClaimedJob | null, mayBeLost = false): readonly string[] | null {
    const features = this.nextClaim?.begin() ?? null;
    if (features) this.nextClaim?.end(next, mayBeLost);
    this.finish('SUCCESS');
    return features;
  }
  run(): Promise<JobOutcome> {
    return this.done;
  }
  stop(reason: StopReason): void {
    this.stopped = reason;
    this.finish('CANCELLED');
  }
  succeed(): void {
    this.finish('SUCCESS');
  }
}

const job = (id: string) => ({ job: { id } as Job, cloud_identity: null }) as ClaimedJob;
function agentWith(client: ScriptedClient, options: { once?: boolean; interval?: number; concurrency?: number } = {}) {
  const runners: FakeRunner[] = [];
  const delays: number[] = [];
  const logLines: string[] = [];
  const clock = new ManualClock();
  const agent = new Agent({
    clock,
    client: client as unknown as TrellisClient,
    logger: new AgentLogger('info', {}, { write: (line: string) => logLines.push(line) }),
    concurrency: options.concurrency ?? 1,
    once: options.once ?? false,
    claimWaitS: 30,
    heartbeatIntervalS: options.interval ?? 60,
    version: '9.9.9',
    backoff: () => {
      const backoff = new Backoff({ initialMs: 1, maxMs: 4, random: () => 0.5 });
      const next = backoff.next.bind(backoff);
      backoff.next = () => {
        const delay = next();
        delays.push(delay);
        return delay;
      };
      return backoff;
    },
    createRunner: (claimed, _gate, nextClaim) => {
      const runner = new FakeRunner(claimed.job, nextClaim);
      runners.push(runner);
      return runner as unknown as JobRunner;
    },
  });
  return { agent, runners, delays, clock, messages: () => logLines.map((line) => JSON.parse(line).msg as string) };
}

describe('the agent daemon', () => {
  it('heartbeats with its version before it claims anything', async () => {
    const client = new ScriptedClient([]);
    const { agent, clock } = agentWith(client);
    const running = agent.run();
    await tick(clock);
    expect(client.heartbeats).toEqual(['9.9.9']);
    expect(client.claims).toBe(1);
    agent.shutdown('finish');
    expect((await running).reason).toBe('stopped');
  });

  it('says at start that it runs no job, retrying until answered, and claims only then', async () => {
    const down = () => new TrellisConnectionError('http://x', new Error('ECONNREFUSED'));
    const client = new ScriptedClient([]);
    client.heartbeatAnswers = [down(), new TrellisApiError({ status: 503 })];
    const { agent, delays, clock } = agentWith(client, { interval: 1 });
    const running = agent.run();
    while (client.claims === 0) await tick(clock, 2);
    expect(client.running.slice(0, 3)).toEqual([[], [], []]);
    expect(client.claimsBefore.slice(0, 3)).toEqual([0, 0, 0]);
    expect(delays).toEqual([1, 2]);
    // The heartbeats that follow say nothing of it.
    while (client.running.length < 4) await tick(clock, 1000);
    expect(client.running[3]).toBeUndefined();
    agent.shutdown('finish');
    expect((await running).reason).toBe('stopped');
  });

  it('backs off with growing delays while the control plane is unreachable, then claims again', async () => {
    const down = () => new TrellisConnectionError('http://x', new Error('ECONNREFUSED'));
    const client = new ScriptedClient([down(), down(), new TrellisApiError({ status: 503 }), down(), job('j1')]);
    const { agent, runners, delays, clock } = agentWith(client);
    const running = agent.run();
    while (runners.length === 0) await tick(clock, 2);
    expect(delays).toEqual([1, 2, 3, 3]);
    runners[0]?.succeed();
    await tick(clock);
    agent.shutdown('finish');
    expect((await running).outcomes).toEqual(['SUCCESS']);
  });

  it('after a claim whose answer may have been lost, says which jobs it runs before it claims again', async () => {
    const broken = () => new TrellisConnectionError('http://x', new Error('UND_ERR_SOCKET'));
    const client = new ScriptedClient([broken(), job('j1')]);
    const { agent, runners, clock } = agentWith(client);
    const running = agent.run();
    while (runners.length === 0) await tick(clock, 2);
    // The hello (none running), then, before the claim retried, the jobs it runs (still none):
    // the control plane ends a job it gave this agent in the lost answer.
    expect(client.running).toEqual([[], []]);
    expect(client.claimsBefore).toEqual([0, 1]);
    runners[0]?.succeed();
    await tick(clock);
    agent.shutdown('finish');
    expect((await running).outcomes).toEqual(['SUCCESS']);
  });

  it("runs the job a final report's answer brings, with no claim of its own, then claims again (issue 31)", async () => {
    const client = new ScriptedClient([job('plan')]);
    const { agent, runners, clock } = agentWith(client);
    const running = agent.run();
    while (runners.length === 0) await tick(clock, 2);
    expect(runners[0]?.reportAndSucceed(job('deploy'))).toContain('upload_source');
    while (runners.length < 2) await tick(clock, 2);
    expect(runners[1]?.job.id).toBe('deploy');
    expect(client.claims).toBe(1);
    // A report whose answer brings nothing: the slot claims as usual.
    runners[1]?.reportAndSucceed(null);
    while (client.claims < 2) await tick(clock, 2);
    agent.shutdown('finish');
    expect((await running).outcomes).toEqual(['SUCCESS', 'SUCCESS']);
    // Nothing was said of lost answers: no heartbeat but the hello listed running jobs.
    expect(client.afterUnansweredClaim).not.toContain(true);
  });

  it('after a final report that may have been taken with its claim, says which jobs it runs before it claims', async () => {
    const client = new ScriptedClient([job('plan')]);
    const { agent, runners, clock } = agentWith(client);
    const running = agent.run();
    while (runners.length === 0) await tick(clock, 2);
    runners[0]?.reportAndSucceed(null, true);
    while (client.claims < 2) await tick(clock, 2);
    const said = client.afterUnansweredClaim.indexOf(true);
    expect(said).toBeGreaterThan(0);
    expect(client.running[said]).toEqual([]);
    expect(client.claimsBefore[said]).toBe(1);
    agent.shutdown('finish');
    expect((await running).outcomes).toEqual(['SUCCESS']);
  });

  it('takes no next job with a final report while it stops, nor with --once', async () => {
    const client = new ScriptedClient([job('plan')]);
    const { agent, runners, clock } = agentWith(client);
    const running = agent.run();
    while (runners.length === 0) await tick(clock, 2);
    agent.shutdown('finish');
    expect(runners[0]?.reportAndSucceed(job('deploy'))).toBeNull();
    expect((await running).outcomes).toEqual(['SUCCESS']);
    expect(runners).toHaveLength(1);

    const once = new ScriptedClient([job('only')]);
    const single = agentWith(once, { once: true });
    const ran = single.agent.run();
    while (single.runners.length === 0) await tick(single.clock, 2);
    expect(single.runners[0]?.reportAndSucceed(job('deploy'))).toBeNull();
    expect((await ran).outcomes).toEqual(['SUCCESS']);
  });

  it('stops at once a job a final report brought after a shutdown that cancels', async () => {
    const client = new ScriptedClient([job('plan')]);
    const { agent, runners, clock } = agentWith(client);
    const running = agent.run();
    while (runners.length === 0) await tick(clock, 2);
    // The report was on its way when the shutdown came: its answer's job is the agent's.
    const features = (runners[0] as unknown as { nextClaim: NextClaim }).nextClaim.begin();
    expect(features).not.toBeNull();
    agent.shutdown('cancel');
    (runners[0] as unknown as { nextClaim: NextClaim }).nextClaim.end(job('deploy'), false);
    const result = await running;
    expect(runners[1]?.job.id).toBe('deploy');
    expect(runners[1]?.stopped).toBe('shutdown');
    expect(result.outcomes).toEqual(['CANCELLED', 'CANCELLED']);
  });

  it('waits for the claims of its other loops to be answered before it says which jobs it runs', async () => {
    const broken = () => new TrellisConnectionError('http://x', new Error('UND_ERR_SOCKET'));
    let answer: (claimed: ClaimedJob | null) => void = () => {};
    const held = new Promise<ClaimedJob | null>((resolve) => {
      answer = resolve;
    });
    const client = new ScriptedClient([broken(), held]);
    const { agent, runners, clock } = agentWith(client, { concurrency: 2 });
    const running = agent.run();
    for (let i = 0; i < 20; i++) await tick(clock, 100);
    // The other loop's claim is still on the way: nothing said yet, no new claim sent.
    expect(client.running).toEqual([[]]);
    expect(client.claims).toBe(2);
    answer(job('j2'));
    while (client.running.length < 2) await tick(clock, 100);
    expect(client.running[1]).toEqual(['j2']);
    runners[0]?.succeed();
    await tick(clock);
    agent.shutdown('finish');
    expect((await running).outcomes).toEqual(['SUCCESS']);
  });

  it('fences itself when no heartbeat is answered for two thirds of the lost-job timeout, and resumes', async () => {
    const down = () => new TrellisConnectionError('http://x', new Error('ETIMEDOUT'));
    const client = new ScriptedClient([]);
    // Answered at start (the lease: 30 s), then unanswered for 40 s, then answered again.
    client.heartbeatAnswers = [
      { cancel_job_ids: [], heartbeat_interval_s: 1, lost_job_timeout_s: 30 },
      ...Array.from({ length: 40 }, down),
    ];
    const { agent, clock, messages } = agentWith(client, { interval: 1 });
    const running = agent.run();
    await tick(clock);
    expect(client.claims).toBe(1); // a long poll on its way
    while (!agent.fenced) await tick(clock, 1000);
    // Two thirds of 30 s after the answered heartbeat was sent (at 0), to the second the test moves the clock by.
    expect(clock.now().getTime()).toBeGreaterThanOrEqual(20_000);
    expect(clock.now().getTime()).toBeLessThan(21_000);
    const fencedAt = messages().filter((m) => m.startsWith('fenced:'));
    expect(fencedAt).toHaveLength(1);
    // The claim on its way was given up; none is sent while fenced, however long it lasts.
    const claims = client.claims;
    for (let i = 0; i < 15; i++) await tick(clock, 1000);
    expect(agent.fenced).toBe(true);
    expect(client.claims).toBe(claims);
    expect(client.claims).toBe(1);

    // A heartbeat is answered: the fence lifts; the given-up claim may have been taken, so the
    // agent says which jobs it runs before it claims again.
    while (agent.fenced) await tick(clock, 1000);
    while (client.claims === 1) await tick(clock, 10);
    expect(messages().filter((m) => m.startsWith('fence lifted:'))).toHaveLength(1);
    const said = client.afterUnansweredClaim.indexOf(true);
    expect(client.running[said]).toEqual([]);
    expect(client.claimsBefore[said]).toBe(1);
    agent.shutdown('finish');
    expect((await running).reason).toBe('stopped');
  });

  it('sends no claim while fenced, however its claims were failing before', async () => {
    const down = () => new TrellisConnectionError('http://x', new Error('ETIMEDOUT'));
    // Claims refused (a replica stopping) over and over: the claim loop retries each after a backoff.
    const client = new ScriptedClient(Array.from({ length: 500 }, () => new TrellisApiError({ status: 503 })));
    client.heartbeatAnswers = [
      { cancel_job_ids: [], heartbeat_interval_s: 1, lost_job_timeout_s: 30 },
      ...Array.from({ length: 40 }, down),
    ];
    const { agent, clock } = agentWith(client, { interval: 1 });
    const running = agent.run();
    const before = client.claims;
    for (let i = 0; i < 5; i++) await tick(clock, 1000);
    expect(client.claims).toBeGreaterThan(before);
    while (!agent.fenced) await tick(clock, 1000);
    await tick(clock, 10);
    const claims = client.claims;
    for (let i = 0; i < 15; i++) await tick(clock, 1000);
    expect(client.claims).toBe(claims);
    while (agent.fenced) await tick(clock, 1000);
    for (let i = 0; i < 5; i++) await tick(clock, 1000);
    expect(client.claims).toBeGreaterThan(claims);
    agent.shutdown('finish');
    expect((await running).reason).toBe('stopped');
  });

  it('while fenced, probes the link with heartbeats more often than its interval, each given up sooner', async () => {
    const down = () => new TrellisConnectionError('http://x', new Error('ETIMEDOUT'));
    const client = new ScriptedClient([]);
    client.heartbeatAnswers = [
      { cancel_job_ids: [], heartbeat_interval_s: 30, lost_job_timeout_s: 30 },
      ...Array.from({ length: 4 }, down),
    ];
    const { agent, clock } = agentWith(client, { interval: 30 });
    const running = agent.run();
    while (!agent.fenced) await tick(clock, 1000);
    const before = client.heartbeats.length;
    // 30 s of fence: six probes where the interval would send one.
    for (let i = 0; i < 30 && agent.fenced; i++) await tick(clock, 1000);
    expect(client.heartbeats.length - before).toBeGreaterThanOrEqual(5);
    expect(client.timeouts.slice(before)).toContain(FENCED_HEARTBEAT_MS);
    expect(client.timeouts[0]).toBeUndefined();
    agent.shutdown('finish');
    await running;
  });

  it('makes its jobs wait at the fence before each engine command', async () => {
    const down = () => new TrellisConnectionError('http://x', new Error('ETIMEDOUT'));
    const client = new ScriptedClient([job('j1')]);
    client.heartbeatAnswers = [
      { cancel_job_ids: [], heartbeat_interval_s: 1, lost_job_timeout_s: 3 },
      ...Array.from({ length: 5 }, down),
    ];
    const gates: Array<{ fenced: boolean; whileFenced(signal?: AbortSignal): Promise<void> }> = [];
    const clock = new ManualClock();
    const agent = new Agent({
      clock,
      client: client as unknown as TrellisClient,
      logger: new AgentLogger('silent'),
      concurrency: 1,
      once: false,
      claimWaitS: 30,
      heartbeatIntervalS: 1,
      version: '9.9.9',
      createRunner: (claimed, gate) => {
        gates.push(gate);
        return new FakeRunner(claimed.job) as unknown as JobRunner;
      },
    });
    const running = agent.run();
    while (gates.length === 0) await tick(clock, 10);
    const gate = gates[0];
    expect(gate?.fenced).toBe(false);
    while (!gate?.fenced) await tick(clock, 500);
    let passed = false;
    const waiting = gate.whileFenced().then(() => {
      passed = true;
    });
    for (let i = 0; i < 4; i++) await tick(clock, 500);
    expect(passed).toBe(false);
    while (!passed) await tick(clock, 500);
    await waiting;
    expect(gate.fenced).toBe(false);
    agent.shutdown('cancel');
    await running;
  });

  it('stops a running job that a heartbeat says was cancelled', async () => {
    const client = new ScriptedClient([job('j1')]);
    client.heartbeatAnswers = [
      { cancel_job_ids: [], heartbeat_interval_s: 30 },
      { cancel_job_ids: ['other', 'j1'], heartbeat_interval_s: 30 },
    ];
    const { agent, runners, clock } = agentWith(client, { interval: 0.05 });
    const running = agent.run();
    while (runners[0]?.stopped == null) await tick(clock, 5);
    expect(runners[0]?.stopped).toBe('cancelled');
    agent.shutdown('finish');
    expect((await running).outcomes).toEqual(['CANCELLED']);
  });

  it('on shutdown(finish) stops claiming but waits for the running job, heartbeating meanwhile', async () => {
    const client = new ScriptedClient([job('j1')]);
    const { agent, runners, clock } = agentWith(client, { interval: 0.02 });
    const running = agent.run();
    while (runners.length === 0) await tick(clock, 2);
    agent.shutdown('finish');
    const beats = client.heartbeats.length;
    await tick(clock, 100);
    expect(runners[0]?.stopped).toBeNull();
    expect(client.heartbeats.length).toBeGreaterThan(beats);
    runners[0]?.succeed();
    expect(await running).toEqual({ reason: 'stopped', outcomes: ['SUCCESS'] });
    expect(client.claims).toBe(1);
  });

  it('on shutdown(cancel) stops the running job', async () => {
    const client = new ScriptedClient([job('j1')]);
    const { agent, runners, clock } = agentWith(client);
    const running = agent.run();
    while (runners.length === 0) await tick(clock, 2);
    agent.shutdown('cancel');
    expect((await running).outcomes).toEqual(['CANCELLED']);
    expect(runners[0]?.stopped).toBe('shutdown');
  });

  it('stops for good when the control plane refuses its credentials', async () => {
    const client = new ScriptedClient([new TrellisApiError({ status: 401, code: 'invalid_worker_credentials' })]);
    const { agent } = agentWith(client);
    expect((await agent.run()).reason).toBe('unauthorized');
    expect(client.claims).toBe(1);
  });

  it('with --once claims a single time and returns after that job', async () => {
    const client = new ScriptedClient([job('j1'), job('j2')]);
    const { agent, runners, clock } = agentWith(client, { once: true });
    const running = agent.run();
    while (runners.length === 0) await tick(clock, 2);
    runners[0]?.succeed();
    expect(await running).toEqual({ reason: 'once', outcomes: ['SUCCESS'] });
    expect(client.claims).toBe(1);
  });
});
