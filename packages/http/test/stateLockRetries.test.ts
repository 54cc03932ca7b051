import { seedRunningJob, seedUser, seedVine, seedWorker } from '@trellis/testkit/memory';
import { afterEach, describe, expect, it } from 'vitest';
import { type ApiHarness, startApi } from './harness.js';

let api: ApiHarness | null = null;
afterEach(async () => {
  await api?.close();
  api = null;
});

describe('state lock and unlock retried after their answer was lost (issue 30)', () => {
  it('answers a LOCK retried with the same ID 200, and an UNLOCK of a lock already released 200; another lock ID is refused', async () => {
    api = await startApi();
    const ada = await seedUser(api.core);
    const worker = await seedWorker(api.core, ada, { heartbeat: true });
    const vine = await seedVine(api.core, ada);
    await seedRunningJob(api.core, ada, worker, vine, 'DEPLOY');
    const send = (method: 'LOCK' | 'UNLOCK', id: string) =>
      fetch(`${api?.url}/api/state/${vine.id}`, {
        method,
        headers: { 'content-type': 'application/json', 'X-Worker-ID': worker.workerId, 'X-Worker-Token': worker.token },
        body: JSON.stringify({ ID: id, Operation: 'OperationTypeApply', Who: 'tofu@agent' }),
      });
    expect((await send('LOCK', 'engine-lock')).status).toBe(200);
    expect((await send('LOCK', 'engine-lock')).status).toBe(200);
    expect((await send('LOCK', 'other-lock')).status).toBe(423);
    expect((await send('UNLOCK', 'other-lock')).status).toBe(409);
    expect((await send('UNLOCK', 'engine-lock')).status).toBe(200);
    expect((await send('UNLOCK', 'engine-lock')).status).toBe(200);
  });
});
