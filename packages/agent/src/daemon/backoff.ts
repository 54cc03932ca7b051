import { setTimeout as sleepFor } from 'node:timers/promises';
import { TrellisApiError, TrellisConnectionError } from '@trellis/client';

export interface BackoffOptions {
  initialMs?: number;
  maxMs?: number;
  /** Source of randomness in [0, 1), for tests. */
  random?: () => number;
}

/**
 * Exponential backoff with "equal jitter": each delay is half the exponential step plus a random
 * part of the other half, so agents that lost the server together do not come back in lockstep,
 * yet none retries in a hot loop.
 */
export class Backoff {
  private attempt = 0;
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly random: () => number;

  constructor(options: BackoffOptions = {}) {
    this.initialMs = options.initialMs ?? 1000;
    this.maxMs = options.maxMs ?? 30_000;
    this.random = options.random ?? Math.random;
  }

  /** The delay before the next attempt; each call doubles the step up to the maximum. */
  next(): number {
    const step = Math.min(this.maxMs, this.initialMs * 2 ** Math.min(this.attempt, 30));
    this.attempt += 1;
    return Math.round(step / 2 + this.random() * (step / 2));
  }

  get failures(): number {
    return this.attempt;
  }

  reset(): void {
    this.attempt = 0;
  }
}

/** An error worth retrying: the server unreachable, overloaded or restarting. */
export function isTransient(error: unknown): boolean {
  if (error instanceof TrellisConnectionError) return true;
  if (error instanceof TrellisApiError) return error.status >= 500 || error.status === 429 || error.status === 408;
  return false;
}

/** Sleeps, or returns early (false) when the signal aborts. */
export async function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return false;
  try {
    await sleepFor(ms, undefined, signal ? { signal } : {});
    return true;
  } catch {
    return false;
  }
}
