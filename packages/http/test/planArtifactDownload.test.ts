import { planArtifactKey } from '@trellis/core';
import { seedRunningJob, seedVine, seedWorker } from '@trellis/testkit';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { type ApiHarness, cliTokens, startApi } from './harness.js';

let api: ApiHarness;
beforeEach(async () => {
  api = await startApi();
});
afterEach(async () => {
  await api.close();
});

/**
 * The body as far as the client gets it, and whether the download failed: the connection is cut
 * before the headers (nothing was written yet) or within the body.
 */
async function download(url: string, worker: { workerId: string; token: string }) {
  const received: Uint8Array[] = [];
  let status: number | null = null;
  let failed = false;
  try {
    const response = await fetch(url, { headers: { 'x-worker-id': worker.workerId, 'x-worker-token': worker.token } });
    status = response.status;
    for await (const chunk of response.body as AsyncIterable<Uint8Array>) received.push(chunk);
  } catch {
    failed = true;
  }
  return { status, body: Buffer.concat(received), failed };
}

it('serves a plan artifact whose bytes match the record, and cuts one whose bytes were altered in storage', async () => {
  const { access_token } = await cliTokens(api);
  const user = api.useCases.auth.authenticateAccessToken(access_token);
  const vine = await seedVine(api.core, user);
  const worker = await seedWorker(api.core, user, { heartbeat: true });
  const job = await seedRunningJob(api.core, user, worker, vine);
  const plan = Buffer.alloc(3 * 1024 * 1024, 'plan');
  await api.useCases.planArtifacts.upload(worker, job.id, [plan]);
  const url = `${api.url}/api/jobs/${job.id}/plan-artifact`;

  const intact = await download(url, worker);
  expect([intact.status, intact.failed, intact.body.equals(plan)]).toEqual([200, false, true]);

  const altered = Buffer.from(plan);
  altered.write('swap', altered.length - 4);
  api.core.artifacts.tamper(planArtifactKey(user.userId, job.id), altered);
  const cut = await download(url, worker);
  expect(cut.failed, 'the client sees the download fail').toBe(true);
  expect(cut.body.length).toBeLessThan(plan.length);
});
