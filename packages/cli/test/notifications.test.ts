/**
 * `trellis notifications` through the real binary and a real server, with a receiver on
 * loopback: create prints the secret once, list/show never do, test delivers a signed request,
 * deliveries lists it, delete removes it; a refused URL is a clear error.
 */
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, runTrellis, TempHome, TestServer } from './harness.js';

let server: TestServer;
let home: TempHome;
const received: { body: string; signature: string }[] = [];
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    received.push({
      body: Buffer.concat(chunks).toString('utf8'),
      signature: String(req.headers['x-trellis-signature']),
    });
    res.writeHead(200).end('ok');
  });
});
let receiverUrl = '';

beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  server = await new TestServer().start(0, { TRELLIS_NOTIFICATIONS_ALLOW_PRIVATE_URLS: 'true' });
  home = new TempHome();
  await login(server, home);
});
afterAll(async () => {
  await server?.destroy();
  home?.remove();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
});

describe('trellis notifications', () => {
  it('create, list, show, test, deliveries and delete', async () => {
    const created = await runTrellis(
      [
        'notifications',
        'create',
        '--name',
        'ops',
        '--kind',
        'webhook',
        '--url',
        receiverUrl,
        '--event',
        'job.failed',
        '--event',
        'job.succeeded',
      ],
      { env: home.env() },
    );
    expect(created.code, created.stderr).toBe(0);
    const secret = created.stdout.trim();
    expect(secret).toMatch(/^whsec_[0-9a-f]{64}$/);
    expect(created.stderr).toContain('shown only once');

    const list = await runTrellis(['notifications', 'list', '--json'], { env: home.env() });
    expect(list.code).toBe(0);
    const [notification] = JSON.parse(list.stdout) as { id: string; events: string[] }[];
    expect(notification?.events).toEqual(['job.failed', 'job.succeeded']);
    expect(list.stdout).not.toContain(secret);
    const id = notification?.id as string;

    const table = await runTrellis(['notifications', 'list'], { env: home.env() });
    expect(table.stdout).toContain('ops');
    const show = await runTrellis(['notifications', 'show', id], { env: home.env() });
    expect(show.stdout).toContain(receiverUrl);
    expect(show.stdout).not.toContain(secret);

    const test = await runTrellis(['notifications', 'test', id, '--json'], { env: home.env() });
    expect(test.code, test.stderr).toBe(0);
    expect(JSON.parse(test.stdout).status).toBe('delivered');
    expect(received).toHaveLength(1);
    const [first] = received;
    expect(first?.signature).toBe(
      `sha256=${createHmac('sha256', secret)
        .update(first?.body ?? '')
        .digest('hex')}`,
    );

    const deliveries = await runTrellis(['notifications', 'deliveries', id, '--json'], { env: home.env() });
    const [delivery] = JSON.parse(deliveries.stdout) as { status: string; attempts: { status_code: number }[] }[];
    expect(delivery?.status).toBe('delivered');
    expect(delivery?.attempts.map((a) => a.status_code)).toEqual([200]);
    const deliveriesTable = await runTrellis(['notifications', 'deliveries', id], { env: home.env() });
    expect(deliveriesTable.stdout).toContain('HTTP 200');

    const deleted = await runTrellis(['notifications', 'delete', id], { env: home.env() });
    expect(deleted.code).toBe(0);
    const empty = await runTrellis(['notifications', 'list', '--json'], { env: home.env() });
    expect(JSON.parse(empty.stdout)).toEqual([]);
  });

  it('explains a refused URL and exits non-zero', async () => {
    const refused = await runTrellis(
      [
        'notifications',
        'create',
        '--name',
        'bad',
        '--kind',
        'slack',
        '--url',
        'ftp://example.com/x',
        '--event',
        'job.failed',
      ],
      { env: home.env() },
    );
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('https://');
    const badEvent = await runTrellis(
      ['notifications', 'create', '--name', 'bad', '--kind', 'slack', '--url', receiverUrl, '--event', 'job.exploded'],
      { env: home.env() },
    );
    expect(badEvent.code).not.toBe(0);
    expect(badEvent.stderr).toContain('--event must be one of');
  });
});
