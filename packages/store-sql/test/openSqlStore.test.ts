import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConflictError, systemScope, UnavailableError } from '@trellis/core';
import { checkTestPostgres, describeWithPostgres, testPostgresAdminUrl, testPostgresPoolSize } from '@trellis/testkit';
import pg from 'pg';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { openSqlStore, type SqlStore, SqlStoreConfigError } from '../src/index.js';
import { requireFreshBuild, runFixture } from './support/children.js';

const postgres = await checkTestPostgres();

/** For stores that are meant to fail: knex's own warnings about it would only be noise. */
const quiet = { warn: () => {}, error: () => {} };

describe('openSqlStore', () => {
  let dir: string;
  const opened: SqlStore[] = [];
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'trellis-open-'));
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()));
    await rm(dir, { recursive: true, force: true });
  });
  const open = async (url: string) => {
    const store = await openSqlStore(url, { logger: quiet });
    opened.push(store);
    return store;
  };

  it('refuses a URL of an unknown scheme, naming the ones it knows', async () => {
    for (const url of ['mysql://localhost/trellis', '/var/lib/trellis.db', '']) {
      const error = await openSqlStore(url).catch((caught: unknown) => caught);
      expect(error, url).toBeInstanceOf(SqlStoreConfigError);
      expect(error).toMatchObject({ code: 'unknown_database_scheme' });
      expect((error as Error).message).toMatch(/sqlite: postgres: postgresql:/);
    }
  });

  it('opens sqlite:///absolute/path, creating missing directories, and migrates it', async () => {
    const file = join(dir, 'nested', 'deeper', 'trellis.db');
    const store = await open(`sqlite://${file}`);
    expect(store.dialect).toBe('sqlite');
    await store.migrate();
    await store.uow.check();
    expect(existsSync(file)).toBe(true);
  });

  it('hands back the event bus of its database: in-process on SQLite, one per store', async () => {
    const store = await open(`sqlite://${join(dir, 'events.db')}`);
    const bus = await store.openEventBus();
    expect(await store.openEventBus()).toBe(bus);
    const heard: unknown[] = [];
    bus.subscribe((event) => heard.push(event));
    const event = { type: 'job_queued', owner_id: 'o', job_id: 'j' } as const;
    await bus.publish(event);
    expect(heard).toEqual([event]);
  });

  it('opens sqlite://relative/path against the working directory', async () => {
    const previous = process.cwd();
    process.chdir(dir);
    try {
      const store = await open('sqlite://data/trellis.db');
      await store.migrate();
    } finally {
      process.chdir(previous);
    }
    expect(existsSync(join(dir, 'data', 'trellis.db'))).toBe(true);
  });

  it('opens sqlite::memory: as a private database', async () => {
    const first = await open('sqlite::memory:');
    const second = await open('sqlite::memory:');
    await first.migrate();
    await second.migrate();
    const user = { id: crypto.randomUUID(), email: 'm@example.test', name: 'm', created_at: new Date().toISOString() };
    await first.uow.run(systemScope, (stores) => stores.users.create(user));
    expect(await first.uow.run(systemScope, (stores) => stores.users.get(user.id))).toEqual(user);
    expect(await second.uow.run(systemScope, (stores) => stores.users.get(user.id))).toBeNull();
  });

  it('lets two stores of one process share a SQLite file without waiting on each other', async () => {
    const url = `sqlite://${join(dir, 'shared.db')}`;
    const [first, second] = [await open(url), await open(url)];
    await first.migrate();
    const users = Array.from({ length: 20 }, (_, i) => ({
      id: crypto.randomUUID(),
      email: `u${i}@example.test`,
      name: `u${i}`,
      created_at: new Date().toISOString(),
    }));
    const started = Date.now();
    await Promise.all(
      users.map((user, i) => (i % 2 ? first : second).uow.run(systemScope, (stores) => stores.users.create(user))),
    );
    // A stall here would be better-sqlite3 waiting out busy_timeout (5 s) with the event loop blocked.
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(
      await first.uow.run(systemScope, async (stores) => (await stores.users.get(users[19]?.id as string))?.name),
    ).toBe('u19');
  });

  it('answers database_unavailable once closed', async () => {
    const store = await openSqlStore(`sqlite://${join(dir, 'closed.db')}`);
    await store.migrate();
    await store.close();
    for (const attempt of [() => store.uow.check(), () => store.uow.run(systemScope, (s) => s.releases.list())]) {
      const error = await attempt().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(UnavailableError);
      expect(error).toMatchObject({ code: 'database_unavailable', message: 'the store is closed' });
    }
  });

  it('reports a file that is not a database as database_unavailable', async () => {
    const file = join(dir, 'garbage.db');
    await writeFile(file, 'this is not a SQLite database, but it is long enough to look like one '.repeat(20));
    const store = await open(`sqlite://${file}`);
    const error = await store.uow.check().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UnavailableError);
    expect(error).toMatchObject({ code: 'database_unavailable' });
  });

  it('reports a SQLite path whose directory cannot be made as database_unavailable', async () => {
    const file = join(dir, 'a-file');
    await writeFile(file, '');
    const error = await openSqlStore(`sqlite://${file}/trellis.db`).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UnavailableError);
    expect(error).toMatchObject({ code: 'database_unavailable' });
  });

  it('translates unique violations hit by a caller into ConflictError, never a vendor code', async () => {
    const store = await open(`sqlite://${join(dir, 'conflict.db')}`);
    await store.migrate();
    const user = { id: crypto.randomUUID(), email: 'c@example.test', name: 'c', created_at: new Date().toISOString() };
    await store.uow.run(systemScope, (stores) => stores.users.create(user));
    const error = await store.uow
      .run(systemScope, (stores) => stores.users.create({ ...user, email: 'other@example.test' }))
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ code: 'already_exists' });
    expect((error as Error).message).not.toMatch(/SQLITE|constraint/i);
  });

  describe('when the driver is not installed', () => {
    beforeAll(() => requireFreshBuild());

    it.each([
      ['better-sqlite3', 'sqlite:///tmp/never-created/trellis.db'],
      ['pg', 'postgres://127.0.0.1:1/never'],
    ])('names the npm package to install (%s)', async (driver, url) => {
      const outcome = JSON.parse(await runFixture('withoutDriver.mjs', [driver, url]));
      expect(outcome).toEqual({
        name: 'SqlStoreConfigError',
        code: 'database_driver_missing',
        message: expect.stringContaining(`npm install ${driver}`),
      });
    });
  });
});

describeWithPostgres('openSqlStore on Postgres', postgres, () => {
  const stores: SqlStore[] = [];
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((store) => store.close()));
  });
  const open = async (url: string) => {
    const store = await openSqlStore(url, { connectTimeoutMs: 3_000, logger: quiet, poolSize: testPostgresPoolSize() });
    stores.push(store);
    return store;
  };
  const withDatabase = (name: string) => {
    const url = new URL(testPostgresAdminUrl());
    url.pathname = `/${name}`;
    return url.toString();
  };

  it('accepts postgres:// and postgresql://', async () => {
    for (const url of [withDatabase('postgres'), withDatabase('postgres').replace(/^postgres:/, 'postgresql:')]) {
      const store = await open(url);
      expect(store.dialect).toBe('postgres');
      await store.uow.check();
    }
  });

  it('hands back the event bus of its database: LISTEN/NOTIFY, so another store on it hears the event', async () => {
    const [one, other] = [await open(withDatabase('postgres')), await open(withDatabase('postgres'))];
    const [publisher, listener] = [await one.openEventBus(), await other.openEventBus()];
    expect(await one.openEventBus()).toBe(publisher);
    const event = { type: 'job_queued', owner_id: randomUUID(), job_id: randomUUID() } as const;
    const heard = new Promise((resolve) => {
      listener.subscribe((received) => {
        if (received.type === 'job_queued' && received.job_id === event.job_id) resolve(received);
      });
    });
    await publisher.publish(event);
    expect(await heard).toEqual(event);
  });

  it('sends a burst of events in a few NOTIFY statements, every one heard once, in publish order', async () => {
    const [one, other] = [await open(withDatabase('postgres')), await open(withDatabase('postgres'))];
    const [publisher, listener] = [await one.openEventBus(), await other.openEventBus()];
    const owner = randomUUID();
    const events = Array.from(
      { length: 300 },
      () => ({ type: 'job_queued', owner_id: owner, job_id: randomUUID() }) as const,
    );
    const heard: string[] = [];
    const all = new Promise<void>((resolve) => {
      listener.subscribe((received) => {
        if (received.type !== 'job_queued' || received.owner_id !== owner) return;
        heard.push(received.job_id);
        if (heard.length === events.length) resolve();
      });
    });
    // Every NOTIFY statement any pg client of this process sends.
    const query = vi.spyOn(pg.Client.prototype, 'query');
    try {
      await Promise.all(events.map((event) => publisher.publish(event)));
      const statements = query.mock.calls.filter(([text]) => typeof text === 'string' && text.includes('pg_notify'));
      expect(statements.length).toBeGreaterThanOrEqual(1);
      expect(statements.length).toBeLessThan(10);
    } finally {
      query.mockRestore();
    }
    await all;
    expect(heard).toEqual(events.map((event) => event.job_id));
  });

  it('reports a server that refuses connections as database_unavailable, from check, run and migrate', async () => {
    const store = await open('postgres://postgres@127.0.0.1:1/trellis');
    for (const attempt of [
      () => store.uow.check(),
      () => store.uow.run(systemScope, (s) => s.releases.list()),
      () => store.migrate(),
    ]) {
      const error = await attempt().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(UnavailableError);
      expect(error).toMatchObject({ code: 'database_unavailable' });
    }
  });

  it('reports a missing database as database_unavailable, saying so', async () => {
    const store = await open(withDatabase(`trellis_missing_${Date.now()}`));
    const error = await store.uow.check().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UnavailableError);
    expect(error).toMatchObject({ code: 'database_unavailable', message: 'the database does not exist' });
  });
});
