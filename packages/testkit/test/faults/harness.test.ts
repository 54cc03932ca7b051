/**
 * The fault harness itself: Toxiproxy's links cut, lose answers and heal as the scenarios rely on,
 * and a dedicated Postgres restarts, survives `kill -9` and is removed.
 */
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requirePeer } from '../../src/peers.js';
import { startDedicatedPostgres, startToxiproxy, type Toxiproxy } from '../../src/faults/index.js';

const TOXIPROXY = requirePeer('toxiproxy-server', 'the fault harness');

describe.skipIf(!TOXIPROXY)('Toxiproxy', () => {
  let toxiproxy: Toxiproxy;
  let upstream: Server;
  let received = 0;

  beforeAll(async () => {
    toxiproxy = await startToxiproxy(TOXIPROXY as string);
    upstream = createServer((_request, response) => {
      received++;
      response.end('pong');
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    await toxiproxy?.stop();
    await new Promise((resolve) => upstream?.close(resolve));
  });

  it('passes requests, loses only the answers, and closes the held connections when healed', async () => {
    const { port } = upstream.address() as { port: number };
    const proxy = await toxiproxy.createProxy('harness', `127.0.0.1:${port}`);
    expect(await (await fetch(`${proxy.url}/ping`)).text()).toBe('pong');

    await proxy.loseAnswers();
    const before = received;
    const held = fetch(`${proxy.url}/ping`, { headers: { connection: 'close' } }).then(
      () => 'answered',
      () => 'closed',
    );
    // The request arrives; its answer does not.
    for (let i = 0; i < 100 && received === before; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(received).toBe(before + 1);
    await proxy.heal();
    expect(await held).toBe('closed');
    expect(await (await fetch(`${proxy.url}/ping`)).text()).toBe('pong');

    await proxy.disable();
    await expect(fetch(`${proxy.url}/ping`)).rejects.toThrow();
    await proxy.enable();
    expect(await (await fetch(`${proxy.url}/ping`)).text()).toBe('pong');
  });
});

describe('a dedicated Postgres', () => {
  it('restarts, survives kill -9 and is removed', async () => {
    const postgres = await startDedicatedPostgres();
    const query = async () => {
      const client = new pg.Client({ connectionString: postgres.url });
      await client.connect();
      try {
        return (await client.query<{ one: number }>('SELECT 1 AS one')).rows[0]?.one;
      } finally {
        await client.end();
      }
    };
    try {
      expect(await query()).toBe(1);
      await postgres.restart();
      expect(await query()).toBe(1);
      postgres.kill9();
      await expect(query()).rejects.toThrow();
      await postgres.start();
      expect(await query()).toBe(1);
      expect(postgres.log()).toContain('database system was interrupted');
    } finally {
      await postgres.destroy();
    }
    await expect(query()).rejects.toThrow();
    expect(existsSync(postgres.dir)).toBe(false);
  });
});
