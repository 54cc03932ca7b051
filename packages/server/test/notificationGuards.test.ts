/**
 * Notification receivers as a way into the server's network (issue 23), through the real control
 * plane on SQLite and Postgres with people signed in through the bootstrap link and the device
 * login: an IPv4 address mapped into IPv6 is the IPv4 address it maps, whatever its spelling; every
 * failed connection of a test delivery reads the same (no open-port oracle); and an owner's test
 * deliveries are limited.
 */
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { TrellisClient } from '@trellis/client';
import { DELIVERY_UNREACHABLE } from '@trellis/core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningControlPlane, startControlPlane } from './support/controlPlane.js';
import { describeEachDialect } from './support/dialects.js';

describeEachDialect('notification receivers', (dialect) => {
  let strict: RunningControlPlane;
  let open: RunningControlPlane;
  const tcp: TcpServer[] = [];

  /** A TCP port that accepts and does what `onConnection` says with each socket. */
  async function tcpPort(onConnection: (socket: import('node:net').Socket) => void): Promise<number> {
    const server = createTcpServer(onConnection);
    tcp.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  }

  /** A port nothing listens on (one that was, closed again). */
  async function closedPort(): Promise<number> {
    const server = createTcpServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return port;
  }

  beforeAll(async () => {
    strict = await startControlPlane(dialect);
    open = await startControlPlane(dialect, {
      env: { TRELLIS_NOTIFICATIONS_ALLOW_PRIVATE_URLS: 'true', TRELLIS_NOTIFICATIONS_TESTS_PER_MINUTE: '3' },
    });
  });
  afterAll(async () => {
    for (const server of tcp) server.close();
    await strict?.close();
    await open?.close();
  });

  it('refuses an IPv4 address mapped into IPv6, in every spelling, as the IPv4 address it is', async () => {
    const client = await strict.userClient('ada@example.test');
    const refused = [
      'https://[::ffff:127.0.0.1]/hook',
      'https://[::ffff:169.254.169.254]/latest/meta-data',
      'https://[::ffff:a9fe:a9fe]/latest/meta-data',
      'https://[0:0:0:0:0:ffff:7f00:1]:8443/hook',
      'https://[::ffff:0:10.0.0.1]/hook',
      'https://[64:ff9b::7f00:1]/hook',
    ];
    for (const url of refused) {
      await expect(
        client.createNotification({ name: 'mapped', kind: 'webhook', url, events: ['job.failed'] }),
        url,
      ).rejects.toMatchObject({ status: 400, code: 'notification_url_refused' });
    }
    expect((await client.listNotifications()).length).toBe(0);
  });

  it('every failed connection of a test delivery gives the same error: refused, reset or not HTTP', async () => {
    const client = await open.userClient('bea@example.test');
    const ports = {
      closed: await closedPort(),
      reset: await tcpPort((socket) => socket.destroy()),
      garbage: await tcpPort((socket) => socket.end('SSH-2.0-OpenSSH_9.6\r\n')),
    };
    const errors: Record<string, string | null> = {};
    for (const [name, port] of Object.entries(ports)) {
      const notification = await client.createNotification({
        name: `probe-${name}`,
        kind: 'webhook',
        url: `http://127.0.0.1:${port}/`,
        events: ['job.failed'],
      });
      const delivery = await client.testNotification(notification.id);
      errors[name] = delivery.attempts[0]?.error ?? null;
    }
    expect(errors).toEqual({
      closed: DELIVERY_UNREACHABLE,
      reset: DELIVERY_UNREACHABLE,
      garbage: DELIVERY_UNREACHABLE,
    });
  });

  it("limits an owner's test deliveries (429 with Retry-After), not another owner's", async () => {
    const carl = await open.userClient('carl@example.test');
    const dora = await open.userClient('dora@example.test');
    const port = await closedPort();
    const make = (client: TrellisClient) =>
      client.createNotification({
        name: 'limited',
        kind: 'webhook',
        url: `http://127.0.0.1:${port}/`,
        events: ['job.failed'],
      });
    const first = await make(carl);
    const second = await make(carl);
    for (const id of [first.id, second.id, first.id]) await carl.testNotification(id);
    // The limit is the owner's, whichever of its notifications is tested.
    await expect(carl.testNotification(second.id)).rejects.toMatchObject({ status: 429, code: 'rate_limited' });
    const response = await fetch(`${open.url}/api/notifications/${first.id}/test`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await open.accessToken('carl@example.test')}` },
    });
    expect(response.status).toBe(429);
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another owner has its own.
    await expect(dora.testNotification((await make(dora)).id)).resolves.toMatchObject({ event: 'notification.test' });
  });
});
