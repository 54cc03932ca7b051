import { type Leadership, type ScheduledTask, SoleLeadership, type TaskObserver, TaskScheduler } from '@trellis/core';
import { ManualTicker } from '@trellis/testkit';
import { describe, expect, it } from 'vitest';

/** A promise the test settles by hand. */
function gate(): { promise: Promise<void>; open(): void; fail(error: Error): void } {
  let open!: () => void;
  let fail!: (error: Error) => void;
  const promise = new Promise<void>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  return { promise, open, fail };
}

function counting(id: string, every: number, scope: ScheduledTask['scope'] = 'local') {
  const task = {
    id,
    every,
    scope,
    runs: 0,
    async run() {
      task.runs += 1;
    },
  };
  return task;
}

/** Leadership a test hands out by hand, recording what was asked. */
class HandLeadership implements Leadership {
  leads = new Set<string>();
  asked: string[] = [];
  resigned = 0;
  async tryLeadership(taskId: string): Promise<boolean> {
    this.asked.push(taskId);
    return this.leads.has(taskId);
  }
  async resign(): Promise<void> {
    this.resigned += 1;
    this.leads.clear();
  }
}

function recordingObserver() {
  const events: string[] = [];
  const observer: TaskObserver = {
    ran: (id, outcome, seconds, error) => {
      expect(seconds).toBeGreaterThanOrEqual(0);
      events.push(`${id} ${outcome}${error ? `: ${(error as Error).message}` : ''}`);
    },
    skipped: (id, reason) => events.push(`${id} skipped (${reason})`),
  };
  return { observer, events };
}

describe('TaskScheduler', () => {
  it('runs each task once per interval passed, the first one interval after start', async () => {
    const ticker = new ManualTicker();
    const fast = counting('fast', 1);
    const slow = counting('slow', 5);
    const scheduler = new TaskScheduler([fast, slow], { leadership: new SoleLeadership(), ticker });
    scheduler.start();
    expect([fast.runs, slow.runs]).toEqual([0, 0]);
    for (let second = 0; second < 10; second += 1) {
      ticker.advance(1);
      await scheduler.idle();
    }
    expect([fast.runs, slow.runs]).toEqual([10, 2]);
    expect(scheduler.stats()).toEqual({
      fast: { runs: 10, failures: 0, skipped: 0 },
      slow: { runs: 2, failures: 0, skipped: 0 },
    });
    await scheduler.close();
  });

  it('never overlaps a task with itself: a turn while a run is still going is skipped', async () => {
    const ticker = new ManualTicker();
    const { observer, events } = recordingObserver();
    const first = gate();
    let started = 0;
    let concurrent = 0;
    let most = 0;
    const task: ScheduledTask = {
      id: 'slow-round',
      every: 1,
      scope: 'local',
      async run() {
        started += 1;
        concurrent += 1;
        most = Math.max(most, concurrent);
        if (started === 1) await first.promise;
        concurrent -= 1;
      },
    };
    const scheduler = new TaskScheduler([task], { leadership: new SoleLeadership(), ticker, observer });
    scheduler.start();
    ticker.advance(1);
    ticker.advance(1);
    ticker.advance(1);
    expect(await scheduler.runNow('slow-round')).toBe('overlapping');
    expect(started).toBe(1);
    first.open();
    await scheduler.idle();
    ticker.advance(1);
    await scheduler.idle();
    expect(started).toBe(2);
    expect(most).toBe(1);
    expect(scheduler.stats()['slow-round']).toEqual({ runs: 2, failures: 0, skipped: 3 });
    expect(events).toEqual([
      'slow-round skipped (overlapping)',
      'slow-round skipped (overlapping)',
      'slow-round skipped (overlapping)',
      'slow-round succeeded',
      'slow-round succeeded',
    ]);
    await scheduler.close();
  });

  it('reports and counts a failed run, and the schedule goes on', async () => {
    const ticker = new ManualTicker();
    const { observer, events } = recordingObserver();
    let runs = 0;
    const task: ScheduledTask = {
      id: 'flaky',
      every: 2,
      scope: 'local',
      async run() {
        runs += 1;
        if (runs === 1) throw new Error('database unavailable');
      },
    };
    const scheduler = new TaskScheduler([task], { leadership: new SoleLeadership(), ticker, observer });
    scheduler.start();
    ticker.advance(2);
    await scheduler.idle();
    ticker.advance(2);
    await scheduler.idle();
    expect(await scheduler.runNow('flaky')).toBe('succeeded');
    expect(events).toEqual(['flaky failed: database unavailable', 'flaky succeeded', 'flaky succeeded']);
    expect(scheduler.stats().flaky).toEqual({ runs: 3, failures: 1, skipped: 0 });
    await scheduler.close();
  });

  it('counts a leadership check that fails as a failed turn, and tries again next turn', async () => {
    let calls = 0;
    const leadership: Leadership = {
      async tryLeadership() {
        calls += 1;
        if (calls === 1) throw new Error('connection lost');
        return true;
      },
      async resign() {},
    };
    const task = counting('sweep', 1, 'global');
    const scheduler = new TaskScheduler([task], { leadership, ticker: new ManualTicker() });
    expect(await scheduler.runNow('sweep')).toBe('failed');
    expect(await scheduler.runNow('sweep')).toBe('succeeded');
    expect(scheduler.stats().sweep).toEqual({ runs: 1, failures: 1, skipped: 0 });
    await scheduler.close();
  });

  it('runs a global task only while this process leads it; a local one everywhere', async () => {
    const ticker = new ManualTicker();
    const leadership = new HandLeadership();
    const global = counting('retention', 1, 'global');
    const local = counting('flush', 1, 'local');
    const scheduler = new TaskScheduler([global, local], { leadership, ticker });
    scheduler.start();
    ticker.advance(1);
    await scheduler.idle();
    expect([global.runs, local.runs]).toEqual([0, 1]);
    leadership.leads.add('retention');
    ticker.advance(1);
    await scheduler.idle();
    expect([global.runs, local.runs]).toEqual([1, 2]);
    expect(leadership.asked).toEqual(['retention', 'retention']);
    expect(scheduler.stats().retention).toEqual({ runs: 1, failures: 0, skipped: 1 });
    await scheduler.close();
    expect(leadership.resigned).toBe(1);
  });

  it('on close, aborts the runs in flight and waits for them; nothing runs after', async () => {
    const ticker = new ManualTicker();
    const seen: string[] = [];
    const task: ScheduledTask = {
      id: 'deliveries',
      every: 1,
      scope: 'local',
      run: (signal) =>
        new Promise<void>((resolve) => {
          seen.push('started');
          signal.addEventListener('abort', () => {
            // Winds down after the abort, as a delivery round finishing its request would.
            setImmediate(() => {
              seen.push('wound down');
              resolve();
            });
          });
        }),
    };
    const other = counting('other', 1);
    const scheduler = new TaskScheduler([task, other], { leadership: new SoleLeadership(), ticker });
    scheduler.start();
    ticker.advance(1);
    expect(seen).toEqual(['started']);
    expect(ticker.active).toBe(2);
    const closed = scheduler.close().then(() => seen.push('closed'));
    expect(ticker.active).toBe(0);
    await closed;
    expect(seen).toEqual(['started', 'wound down', 'closed']);
    expect(await scheduler.runNow('other')).toBe('closed');
    expect(other.runs).toBe(1);
  });

  it('refuses two tasks of one id and an interval that is not positive', () => {
    const leadership = new SoleLeadership();
    expect(() => new TaskScheduler([counting('a', 1), counting('a', 2)], { leadership })).toThrow(/two .* named a/);
    expect(() => new TaskScheduler([counting('b', 0)], { leadership })).toThrow(/more than 0 \(got 0\)/);
    expect(() => new TaskScheduler([], { leadership }).runNow('c')).toThrow(/no background task is named c/);
  });
});
