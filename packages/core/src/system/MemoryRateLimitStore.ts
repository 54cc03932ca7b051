import type { RateLimitCount, RateLimitStore } from '../ports/RateLimitStore.js';

/**
 * Rate-limit counters of this process: right for a single server (SQLite). Ended windows are
 * dropped as they are met and by a sweep once the map grows, so random keys cannot fill memory.
 */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly windows = new Map<string, { hits: number; resetsAt: number }>();

  constructor(private readonly sweepAbove = 10_000) {}

  async hit(key: string, at: Date, windowSeconds: number): Promise<RateLimitCount> {
    const now = at.getTime();
    let window = this.windows.get(key);
    if (!window || window.resetsAt <= now) {
      if (this.windows.size >= this.sweepAbove) this.sweep(now);
      window = { hits: 0, resetsAt: now + windowSeconds * 1000 };
      this.windows.set(key, window);
    }
    window.hits += 1;
    return { hits: window.hits, resetsAt: new Date(window.resetsAt) };
  }

  async get(key: string, at: Date): Promise<RateLimitCount | null> {
    const window = this.windows.get(key);
    if (!window || window.resetsAt <= at.getTime()) return null;
    return { hits: window.hits, resetsAt: new Date(window.resetsAt) };
  }

  async undo(key: string, at: Date): Promise<void> {
    const window = this.windows.get(key);
    if (window && window.resetsAt > at.getTime() && window.hits > 0) window.hits -= 1;
  }

  async reset(key: string): Promise<void> {
    this.windows.delete(key);
  }

  private sweep(now: number): void {
    for (const [key, window] of this.windows) if (window.resetsAt <= now) this.windows.delete(key);
  }
}
