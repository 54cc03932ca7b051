import { Backoff, TrellisApiError, type TrellisClient, TrellisConnectionError } from '@trellis/client';
import type { ClaimedJob, HeartbeatAnswer, Job } from '@trellis/core';
import { describe, expect, it } from 'vitest';
import { Agent } from '../../src/daemon/Agent.js';
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
  /** How many claims each heartbeat came after. */
  claimsBefore: number[] = [];
  claims = 0;
  heartbeatAnswers: Array<HeartbeatAnswer | Error> = [];
  constructor(private readonly steps: ClaimStep[]) {}

  async heartbeat(version: string, running?: readonly string[]): Promise<HeartbeatAnswer> {
    this.heartbeats.push(version);
    this.running.push(running);
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
  constructor(readonly job: Job) {}
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
  const clock = new ManualClock();
  const agent = new Agent({
    clock,
    client: client as unknown as TrellisClient,
    logger: new AgentLogger('silent'),
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
    createRunner: (claimed) => {
      const runner = new FakeRunner(claimed.job);
      runners.push(runner);
      return runner as unknown as JobRunner;
    },
  });
  return { agent, runners, delays, clock };
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
