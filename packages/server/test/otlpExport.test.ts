import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningControlPlane, startControlPlane } from './support/controlPlane.js';

describe('OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  const received: { path: string; type: string; bytes: number }[] = [];
  const collector = createServer((req: IncomingMessage, res) => {
    let bytes = 0;
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    req.on('end', () => {
      received.push({ path: req.url ?? '', type: req.headers['content-type'] ?? '', bytes });
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  let server: RunningControlPlane | undefined;

  beforeAll(async () => {
    await new Promise<void>((done) => collector.listen(0, '127.0.0.1', () => done()));
  });
  afterAll(async () => {
    await server?.close();
    await new Promise((done) => collector.close(done));
  });

  it('sends the spans of requests to the collector over OTLP/HTTP, flushed when the server closes', async () => {
    const { port } = collector.address() as AddressInfo;
    server = await startControlPlane('sqlite', { env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}/` } });
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    await server.close();
    server = undefined;
    expect(received.length).toBeGreaterThan(0);
    expect(received.every((request) => request.path === '/v1/traces' && request.bytes > 0)).toBe(true);
  });
});
