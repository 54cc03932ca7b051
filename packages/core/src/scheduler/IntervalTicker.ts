import type { Ticker } from '../ports/Ticker.js';

/** The longest delay Node's timers take (about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Real intervals, which never keep the process alive by themselves. */
export class IntervalTicker implements Ticker {
  every(seconds: number, tick: () => void): () => void {
    const timer = setInterval(tick, Math.min(seconds * 1000, MAX_TIMER_MS));
    timer.unref();
    return () => clearInterval(timer);
  }
}
