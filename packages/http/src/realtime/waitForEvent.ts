import type { EventBus, TrellisEvent } from '@trellis/core';

/**
 * Resolves true when a matching event arrives, false when `timeoutMs` passes or `signal` aborts.
 * Subscribe before reading state and re-read after waking: then nothing is ever missed.
 */
export function waitForEvent(
  events: EventBus,
  matches: (event: TrellisEvent) => boolean,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const finish = (result: boolean) => {
      clearTimeout(timer);
      unsubscribe();
      signal?.removeEventListener('abort', onAbort);
      resolve(result);
    };
    const onAbort = () => finish(false);
    const unsubscribe = events.subscribe((event) => {
      if (matches(event)) finish(true);
    });
    const timer = setTimeout(() => finish(false), Math.max(0, timeoutMs));
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
