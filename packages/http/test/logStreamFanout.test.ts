import { seedVine, seedWorker } from '@trellis/testkit';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { type ApiHarness, cliTokens, startApi } from './harness.js';

let api: ApiHarness;
beforeEach(async () => {
  api = await startApi();
});
afterEach(async () => {
  await api.close();
});

/** Reads a stream until its `end` event; returns the log chunk texts. */
async function follow(url: string, token: string): Promise<string[]> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  const text = await response.text();
  return [...text.matchAll(/event: log\ndata: (.*)\n/g)].map((m) => JSON.parse(m[1] as string).log_chunk);
}

it('serves many followers of one job with one read per update, each getting every chunk once', async () => {
  const { access_token } = await cliTokens(api);
  const user = api.useCases.auth.authenticateAccessToken(access_token);
  const vine = await seedVine(api.core, user);
  const worker = await seedWorker(api.core, user);
  const job = await api.useCases.jobs.create(user, { job_type: 'PLAN', configuration_id: vine.id });
  await api.useCases.jobs.claim(worker);

  let reads = 0;
  const read = api.useCases.logs.read.bind(api.useCases.logs);
  api.useCases.logs.read = (...args) => {
    reads += 1;
    return read(...args);
  };

  const followers = 20;
  const streams = Array.from({ length: followers }, () =>
    follow(`${api.url}/api/jobs/${job.id}/logs/stream`, access_token),
  );
  // Every stream past its backlog and following live (the server's own counter, not a pause).
  while (api.logStreams.stats().live < followers) await new Promise((resolve) => setTimeout(resolve, 10));
  const readsAfterBacklogs = reads;
  const chunks = 10;
  for (let i = 0; i < chunks; i++) {
    await api.useCases.logs.append(worker, job.id, { log_chunk: `line ${i}\n`, stream_type: 'STDOUT' });
  }
  await api.useCases.jobs.reportStatus(worker, job.id, { status: 'SUCCESS' });
  const received = await Promise.all(streams);

  const expected = Array.from({ length: chunks }, (_, i) => `line ${i}\n`);
  for (const lines of received) expect(lines).toEqual(expected);
  // One backlog read per follower, then about one read per event for all of them together —
  // not one per follower per event (which would be 20 × 11 here).
  expect(readsAfterBacklogs).toBeLessThanOrEqual(followers + 1);
  expect(reads - readsAfterBacklogs).toBeLessThanOrEqual(2 * (chunks + 1));
});
