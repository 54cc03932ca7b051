import type { Clock } from '@trellis/core';

export type Duration = number | { ms?: number; seconds?: number; minutes?: number; hours?: number; days?: number };

export const DEFAULT_FAKE_TIME = '2026-01-01T00:00:00.000Z';

function toMs(duration: Duration): number {
  if (typeof duration === 'number') return duration;
  const { ms = 0, seconds = 0, minutes = 0, hours = 0, days = 0 } = duration;
  return ms + 1000 * (seconds + 60 * (minutes + 60 * (hours + 24 * days)));
}

/** A clock that moves only when told: tests advance it instead of sleeping. */
export class FakeClock implements Clock {
  private ms: number;

  constructor(start: Date | string | number = DEFAULT_FAKE_TIME) {
    this.ms = FakeClock.parse(start);
  }

  now(): Date {
    return new Date(this.ms);
  }

  /** Moves time forward by milliseconds or by a duration such as `{ seconds: 61 }`. */
  advance(duration: Duration): Date {
    const ms = toMs(duration);
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError('a fake clock only moves forward');
    this.ms += ms;
    return this.now();
  }

  set(time: Date | string | number): Date {
    this.ms = FakeClock.parse(time);
    return this.now();
  }

  private static parse(time: Date | string | number): number {
    const ms = time instanceof Date ? time.getTime() : typeof time === 'number' ? time : Date.parse(time);
    if (!Number.isFinite(ms)) throw new RangeError(`not a time: ${String(time)}`);
    return ms;
  }
}
