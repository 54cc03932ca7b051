import { describe, expect, it } from 'vitest';
import { type FenceChange, fenceDeadline, LeaseFence } from '../../src/daemon/LeaseFence.js';
import { ManualClock } from '../support/manualClock.js';

function fenceAt(clock: ManualClock) {
  const changes: Array<{ change: FenceChange; silentMs: number; lostJobTimeoutS: number }> = [];
  const fence = new LeaseFence(clock, (change, details) => changes.push({ change, ...details }));
  return { fence, changes };
}

describe("an agent's lease on its jobs", () => {
  it('runs out at two thirds of the lost-job timeout, counted from when the last answered heartbeat was sent', () => {
    expect(fenceDeadline(1_000, 120)).toBe(81_000);
    expect(fenceDeadline(0, 6)).toBe(4_000);
  });

  it('fences the agent at the deadline, not a moment before, and tells it once', () => {
    const clock = new ManualClock();
    const { fence, changes } = fenceAt(clock);
    fence.renew(clock.now(), 30);
    clock.advance(19_999);
    expect(fence.fenced).toBe(false);
    expect(fence.msUntilFence()).toBe(1);
    clock.advance(1);
    expect(fence.fenced).toBe(true);
    clock.advance(60_000);
    expect(fence.fenced).toBe(true);
    expect(changes).toEqual([{ change: 'fenced', silentMs: 20_000, lostJobTimeoutS: 30 }]);
  });

  it('lifts when a heartbeat is answered again', () => {
    const clock = new ManualClock();
    const { fence, changes } = fenceAt(clock);
    fence.renew(clock.now(), 30);
    clock.advance(25_000);
    expect(fence.update()).toBe('fenced');
    // An answer to a heartbeat sent now; the control plane may have changed its timeout.
    expect(fence.renew(clock.now(), 60)).toBe('resumed');
    expect(fence.fenced).toBe(false);
    expect(fence.msUntilFence()).toBe(40_000);
    expect(changes.map((c) => c.change)).toEqual(['fenced', 'resumed']);
  });

  it('renews from the send time of the heartbeat, and never back in time', () => {
    const clock = new ManualClock();
    const { fence } = fenceAt(clock);
    fence.renew(new Date(10_000), 30);
    // A slow answer to an older heartbeat does not shorten the lease.
    fence.renew(new Date(5_000), undefined);
    expect(fence.msUntilFence()).toBe(30_000);
    clock.advance(29_999);
    expect(fence.fenced).toBe(false);
    clock.advance(1);
    expect(fence.fenced).toBe(true);
  });

  it('never fences an agent whose control plane does not say its timeout, nor before the first answer', () => {
    const clock = new ManualClock();
    const { fence, changes } = fenceAt(clock);
    clock.advance(1_000_000);
    expect(fence.fenced).toBe(false);
    fence.renew(clock.now(), undefined);
    clock.advance(1_000_000);
    expect(fence.fenced).toBe(false);
    expect(fence.msUntilFence()).toBeNull();
    // An answer without it keeps the timeout an earlier answer gave.
    fence.renew(clock.now(), 3);
    fence.renew(clock.now(), undefined);
    clock.advance(2_000);
    expect(fence.fenced).toBe(true);
    expect(changes.map((c) => c.change)).toEqual(['fenced']);
  });

  it('holds what waits on it until the fence lifts, or until its signal aborts', async () => {
    const clock = new ManualClock();
    const { fence } = fenceAt(clock);
    await fence.whileFenced(); // not fenced: at once
    fence.renew(clock.now(), 3);
    clock.advance(2_000);
    let released = false;
    const waiting = fence.whileFenced().then(() => {
      released = true;
    });
    const stop = new AbortController();
    let stopped = false;
    const stopping = fence.whileFenced(stop.signal).then(() => {
      stopped = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect([released, stopped]).toEqual([false, false]);
    stop.abort();
    await stopping;
    expect([released, stopped]).toEqual([false, true]);
    fence.renew(clock.now(), 3);
    await waiting;
    expect(released).toBe(true);
  });
});
