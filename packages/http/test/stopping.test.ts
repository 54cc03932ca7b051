import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { problemErrorHandler, silentLogger } from '@trellis/http';
import { seedUser, seedWorker } from '@trellis/testkit/memory';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { type ApiHarness, json, startApi } from './harness.js';

let api: ApiHarness | null = null;
afterEach(async () => {
  await api?.close();
  api = null;
});

async function expectShuttingDown(response: Response): Promise<void> {
  expect(response.status).toBe(503);
  expect(response.headers.get('content-type')).toContain('application/problem+json');
  expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(((await response.json()) as { code: string }).code).toBe('shutting_down');
}

describe('a stopping replica (issue 30)', () => {
  it("answers an agent's request that arrives once it stops 503 shutting_down with Retry-After, never 500", async () => {
    const stopping = new AbortController();
    api = await startApi({ shutdownSignal: stopping.signal });
    const ada = await seedUser(api.core);
    const worker = await seedWorker(api.core, ada, { heartbeat: true });
    const headers = { 'X-Worker-ID': worker.workerId, 'X-Worker-Token': worker.token };
    const beat = () => fetch(`${api?.url}/api/workers/heartbeat`, json({ version: '1.0.0' }, headers));
    expect((await beat()).status).toBe(200);
    stopping.abort();
    await expectShuttingDown(await beat());
    await expectShuttingDown(await fetch(`${api.url}/readyz`));
  });

  it('answers a request that fails for what stops under it (a closed pool) 503 shutting_down, and 500 otherwise', async () => {
    const stopping = new AbortController();
    const app = express();
    app.get('/work', () => {
      throw new Error('Unable to acquire a connection');
    });
    app.use(problemErrorHandler(silentLogger, stopping.signal));
    const server = createServer(app);
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/work`;
    try {
      expect((await fetch(url)).status).toBe(500);
      stopping.abort();
      await expectShuttingDown(await fetch(url));
    } finally {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    }
  });

  it('answers a database outage 503 database_unavailable with Retry-After', async () => {
    api = await startApi();
    const ada = await seedUser(api.core);
    const worker = await seedWorker(api.core, ada, { heartbeat: true });
    api.core.uow.setUnavailable();
    const response = await fetch(
      `${api.url}/api/workers/heartbeat`,
      json(
        { version: '1.0.0', running_job_ids: [] },
        { 'X-Worker-ID': worker.workerId, 'X-Worker-Token': worker.token },
      ),
    );
    expect(response.status).toBe(503);
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
