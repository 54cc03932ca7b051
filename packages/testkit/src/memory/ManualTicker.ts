import type { Ticker } from '@trellis/core';

interface Registration {
  readonly seconds: number;
  readonly tick: () => void;
  /** Seconds since this registration last ticked. */
  elapsed: number;
}

/** A ticker turned by hand: `advance(seconds)` ticks each registration once per whole interval passed. */
export class ManualTicker implements Ticker {
  private readonly registrations = new Set<Registration>();

  every(seconds: number, tick: () => void): () => void {
    const registration: Registration = { seconds, tick, elapsed: 0 };
    this.registrations.add(registration);
    return () => {
      this.registrations.delete(registration);
    };
  }

  /** Intervals still registered (stopped ones are gone). */
  get active(): number {
    return this.registrations.size;
  }

  advance(seconds: number): void {
    for (const registration of [...this.registrations]) {
      registration.elapsed += seconds;
      while (registration.elapsed >= registration.seconds && this.registrations.has(registration)) {
        registration.elapsed -= registration.seconds;
        registration.tick();
      }
    }
  }
}
