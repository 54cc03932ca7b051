import { seedUser, seedWorker } from '@trellis/testkit/memory';
import { afterEach, describe, expect, it } from 'vitest';
import { type ApiHarness, startApi } from './harness.js';

let api: ApiHarness | null = null;
afterEach(async () => {
  await api?.close();
  api = null;
});

/** Waits for a condition the server reaches by itself (never for a span of time). */
async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (condition()) return;
    await new Promise((done) => setTimeout(done, 20));
  }
  throw new Error(`never happened: ${what}`);
}

describe('a long-polled claim whose client went away (issue 30, fault scenario 7)', () => {
  it('claims nothing once the client is gone: a job taken then would be answered to nobody', async () => {
    api = await startApi();
    const ada = await seedUser(api.core);
    const worker = await seedWorker(api.core, ada, { heartbeat: true });
    const { jobs } = api.useCases;
    const claim = jobs.claim.bind(jobs);
    let attempts = 0;
    let attempted: () => void = () => {};
    jobs.claim = (...args: Parameters<typeof claim>) => {
      attempts += 1;
      attempted();
      return claim(...args);
    };
    // The poll waits as a subscriber of the event bus: counted here.
    const { events } = api.core;
    const subscribe = events.subscribe.bind(events);
    let subscribers = 0;
    events.subscribe = (listener) => {
      subscribers += 1;
      const unsubscribe = subscribe(listener);
      return () => {
        subscribers -= 1;
        unsubscribe();
      };
    };
    const client = new AbortController();
    // The poll's first attempt: it finds nothing, and waits (re-checking every 2 s).
    const firstAttempt = new Promise<void>((resolve) => {
      attempted = resolve;
    });
    const poll = fetch(`${api.url}/api/jobs/claim?wait=30`, {
      method: 'POST',
      headers: { 'X-Worker-ID': worker.workerId, 'X-Worker-Token': worker.token },
      signal: client.signal,
    }).catch(() => null);
    await firstAttempt;
    await until(() => subscribers === 1, 'the poll to wait');
    // Gone right after an attempt, so no re-check is due before the server sees it.
    const before = attempts;
    client.abort();
    await poll;
    await until(() => subscribers === 0, 'the poll to end');
    expect(attempts).toBe(before);
  });
});
