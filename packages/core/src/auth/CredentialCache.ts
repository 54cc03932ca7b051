import type { Clock } from '../ports/Clock.js';

interface Entry<T> {
  value: T;
  expiresAt: number;
}

/**
 * Credentials verified a moment ago, so steady requests need no database round trip each: what a
 * verification found, by key, for `ttlSeconds` at most (0: nothing is kept), at most `maxEntries`
 * of them, the least recently used going first. Only successes belong here. A change to the
 * credentials drops them (`forget`, `forgetAll`); a lookup that started before such a change may
 * have read what it replaced, so it is not kept (`ticket`).
 */
export class CredentialCache<T> {
  /** In least-recently-used order: a hit moves its entry to the end, the first goes when full. */
  private readonly entries = new Map<string, Entry<T>>();
  /** Counts the forgets: a lookup that started before one may be stale, so it is not remembered. */
  private forgets = 0;

  constructor(
    private readonly clock: Clock,
    private readonly ttlSeconds: number,
    private readonly maxEntries = 10_000,
  ) {}

  /** What was remembered under `key`, unexpired; null otherwise. */
  get(key: string): T | null {
    const entry = this.entries.get(key);
    if (!entry) return null;
    this.entries.delete(key);
    if (entry.expiresAt <= this.clock.now().getTime()) return null;
    this.entries.set(key, entry);
    return entry.value;
  }

  /**
   * Taken before the database read whose result goes to `remember`: if any credentials change
   * meanwhile (an event may overtake the read), the result is not kept.
   */
  ticket(): number {
    return this.forgets;
  }

  remember(key: string, value: T, ticket: number): void {
    if (this.ttlSeconds <= 0 || this.maxEntries <= 0 || ticket !== this.forgets) return;
    this.entries.delete(key);
    while (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
    this.entries.set(key, { value, expiresAt: this.clock.now().getTime() + this.ttlSeconds * 1000 });
  }

  /** Replaces what is held under `key`, if anything, keeping when it expires. */
  replace(key: string, value: T): void {
    const entry = this.entries.get(key);
    if (entry) entry.value = value;
  }

  forget(key: string): void {
    this.forgets += 1;
    this.entries.delete(key);
  }

  forgetAll(): void {
    this.forgets += 1;
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
