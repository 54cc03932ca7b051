/**
 * NodeWebhookSender against real HTTP receivers on loopback: what is sent, redirects not
 * followed, a bounded excerpt, a timeout, and private addresses refused when the socket connects
 * (an IP literal and a name that resolves to loopback alike).
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NodeWebhookSender } from '@trellis/providers';
import { afterEach, describe, expect, it } from 'vitest';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

async function receiver(listener: RequestListener, host = '127.0.0.1'): Promise<number> {
  const server = createServer(listener);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return (server.address() as AddressInfo).port;
}

const sender = new NodeWebhookSender();
const base = { headers: { 'content-type': 'application/json', 'x-trellis-event': 'job.failed' }, timeoutMs: 5000 };

describe('NodeWebhookSender', () => {
  it('POSTs the body and headers and reads the answer', async () => {
    const seen: { method?: string; body: string; event?: string; length?: string }[] = [];
    const port = await receiver((req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        seen.push({
          method: req.method,
          body,
          event: req.headers['x-trellis-event'] as string,
          length: req.headers['content-length'],
        });
        res.writeHead(202).end('accepted');
      });
    });
    const body = JSON.stringify({ event: 'job.failed', note: 'é' });
    const answer = await sender.send({
      ...base,
      url: `http://127.0.0.1:${port}/hook`,
      body,
      allowPrivateAddresses: true,
    });
    expect(answer).toEqual({ kind: 'answered', status: 202, excerpt: 'accepted' });
    expect(seen).toEqual([{ method: 'POST', body, event: 'job.failed', length: String(Buffer.byteLength(body)) }]);
  });

  it('does not follow a redirect and keeps only the first bytes of an answer', async () => {
    let followed = false;
    const target = await receiver((_req, res) => {
      followed = true;
      res.end();
    });
    const port = await receiver((_req, res) => {
      res.writeHead(302, { location: `http://127.0.0.1:${target}/` }).end();
    });
    const redirected = await sender.send({
      ...base,
      url: `http://127.0.0.1:${port}/`,
      body: '{}',
      allowPrivateAddresses: true,
    });
    expect(redirected).toMatchObject({ kind: 'answered', status: 302 });
    expect(followed).toBe(false);

    const big = await receiver((_req, res) => {
      res.writeHead(500).end('x'.repeat(100_000));
    });
    const answer = await sender.send({
      ...base,
      url: `http://127.0.0.1:${big}/`,
      body: '{}',
      allowPrivateAddresses: true,
    });
    expect(answer.kind).toBe('answered');
    expect(answer.kind === 'answered' && answer.status).toBe(500);
    expect(answer.kind === 'answered' && answer.excerpt.length).toBeLessThanOrEqual(512);
  });

  it('gives up on a receiver that does not answer in time', async () => {
    const port = await receiver(() => {
      // Never answers.
    });
    const answer = await sender.send({
      ...base,
      timeoutMs: 200,
      url: `http://127.0.0.1:${port}/`,
      body: '{}',
      allowPrivateAddresses: true,
    });
    expect(answer).toEqual({ kind: 'failed', error: 'no answer within 200 ms' });
  });

  it('refuses private addresses unless allowed, checked when it connects', async () => {
    let reached = 0;
    const port = await receiver((_req, res) => {
      reached += 1;
      res.end();
    });
    const literal = await sender.send({
      ...base,
      url: `http://127.0.0.1:${port}/`,
      body: '{}',
      allowPrivateAddresses: false,
    });
    expect(literal.kind).toBe('refused');
    // A name resolving to loopback is refused by the lookup the socket uses, not by an earlier check.
    const named = await sender.send({
      ...base,
      url: `http://localhost:${port}/`,
      body: '{}',
      allowPrivateAddresses: false,
    });
    expect(named).toMatchObject({ kind: 'refused' });
    expect(reached).toBe(0);
    expect(await sender.resolve('localhost')).toEqual(expect.arrayContaining([expect.stringMatching(/^(127\.|::1)/)]));
    const allowed = await sender.send({
      ...base,
      url: `http://localhost:${port}/`,
      body: '{}',
      allowPrivateAddresses: true,
    });
    expect(allowed).toMatchObject({ kind: 'answered', status: 200 });
    expect(reached).toBe(1);
  });

  it('refuses IPv4-mapped IPv6 literals of private addresses, in either spelling (issue 23)', async () => {
    let reached = 0;
    // Dual stack: [::ffff:127.0.0.1] reaches a receiver listening on every address.
    const port = await receiver((_req, res) => {
      reached += 1;
      res.end();
    }, '::');
    for (const host of ['[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '[0:0:0:0:0:ffff:7f00:1]', '[::ffff:0:7f00:1]']) {
      const answer = await sender.send({
        ...base,
        url: `http://${host}:${port}/`,
        body: '{}',
        allowPrivateAddresses: false,
      });
      expect(answer, host).toMatchObject({ kind: 'refused' });
    }
    expect(reached).toBe(0);
    const allowed = await sender.send({
      ...base,
      url: `http://[::ffff:127.0.0.1]:${port}/`,
      body: '{}',
      allowPrivateAddresses: true,
    });
    expect(allowed).toMatchObject({ kind: 'answered', status: 200 });
  });
});
