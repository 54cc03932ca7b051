import {
  type EventBus,
  InProcessEventBus,
  type Leadership,
  type OperationalStats,
  type RateLimitStore,
  SoleLeadership,
  type UnitOfWork,
} from '@trellis/core';
import type { Dialect, DialectName } from './dialects/Dialect.js';
import type { PostgresEventBus, PostgresEventBusOptions } from './PostgresEventBus.js';
import type { PoolStats } from './PoolWatch.js';
import { SqlOperationalStats } from './SqlOperationalStats.js';
import { SqlRateLimitStore } from './SqlRateLimitStore.js';
import { SqlUnitOfWork } from './SqlUnitOfWork.js';
import { MIGRATIONS } from './migrations/migrationSource.js';
import type { TrellisMigration } from './migrations/TrellisMigration.js';

export type { DialectName } from './dialects/Dialect.js';

/** Where the store's own warnings go (knex's: dropped connections, pool errors). */
export interface SqlStoreLogger {
  warn(message: string): void;
  error(message: string): void;
}

export interface SqlStoreOptions {
  /** Postgres: most pooled connections (default 10, at least 2). SQLite always uses one. */
  poolSize?: number;
  /** Postgres: how long to wait for a connection before the database counts as unavailable (default 10 s). */
  connectTimeoutMs?: number;
  /** SQLite: how long SQLite waits inside a statement for another process's lock (default 5 s). */
  busyTimeoutMs?: number;
  /** How long a unit of work or `migrate()` keeps waiting for another process's lock (default 30 s). */
  lockWaitMs?: number;
  /** Default: the console. Callers see failures as domain errors whatever this does. */
  logger?: SqlStoreLogger;
  /**
   * What `migrate()` applies, in order (default: `MIGRATIONS`, Trellis's own). A build that adds
   * tables of its own appends its migrations after them; the upgrade test stands in a newer
   * release this way.
   */
  migrations?: readonly TrellisMigration[];
}

/** The store ports on one SQL database. */
export interface SqlStore {
  /** Which engine the URL named; for logs and diagnostics, never for branching outside this package. */
  readonly dialect: DialectName;
  readonly uow: UnitOfWork;
  /** Rate-limit counters in the database, shared by every process on it (each hit is a write). */
  readonly rateLimits: RateLimitStore;
  /** Counts across owners for the operators' metrics (issue 18). */
  readonly operationalStats: OperationalStats;
  /** The connection pool now (used, free, waiting) and the time acquisitions waited so far. */
  poolStats(): PoolStats;
  /**
   * The event bus that goes with this database, opened once (later calls return the same bus):
   * on Postgres `LISTEN`/`NOTIFY` on its own connection, so every replica on the database hears
   * every event; on SQLite, whose database one server process uses, an in-process bus. `close()`
   * closes it.
   */
  openEventBus(options?: PostgresEventBusOptions): Promise<EventBus>;
  /**
   * Who runs the global background tasks (core's `TaskScheduler`): on Postgres, advisory locks on
   * the event bus's connection (opening the bus if it is not open yet), so one replica leads each
   * task; on SQLite, whose database one server process uses, that process leads them all.
   */
  openLeadership(): Promise<Leadership>;
  /**
   * Applies pending migrations; safe to run from several processes at once, a no-op when up to
   * date. A database migrated by a newer release (migrations this one does not know) is not an
   * error: a warning says so and this release runs beside the newer one (docs/operations.md, Upgrades).
   */
  migrate(): Promise<void>;
  /**
   * The names of the migrations `migrate()` would apply, in order (empty when up to date); reads
   * only, for a process that must not change the schema itself.
   */
  pendingMigrations(): Promise<string[]>;
  /** Closes the connections once running units of work have finished. */
  close(): Promise<void>;
}

/** A configuration mistake: the URL or the installed drivers do not fit. */
export class SqlStoreConfigError extends Error {
  constructor(
    readonly code: 'unknown_database_scheme' | 'invalid_database_url' | 'database_driver_missing',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'SqlStoreConfigError';
  }
}

interface DialectEntry {
  /** The npm package a user must install to use the dialect. */
  driver: string;
  open(url: string, options: Required<SqlStoreOptions>): Promise<Dialect>;
}

/**
 * Dialects by name, each loaded only when a URL asks for it, so that a deployment installs only
 * the driver it uses (both are optional peer dependencies).
 */
const DIALECTS: Readonly<Record<DialectName, DialectEntry>> = {
  sqlite: {
    driver: 'better-sqlite3',
    async open(url, options) {
      const { SqliteDialect } = await import('./dialects/sqlite/SqliteDialect.js');
      return SqliteDialect.open(sqliteLocation(url), options);
    },
  },
  postgres: {
    driver: 'pg',
    async open(url, options) {
      const { PostgresDialect } = await import('./dialects/postgres/PostgresDialect.js');
      return PostgresDialect.open(url, options);
    },
  },
};

const SCHEMES: Readonly<Record<string, DialectName>> = {
  'sqlite:': 'sqlite',
  'postgres:': 'postgres',
  'postgresql:': 'postgres',
};

const DEFAULTS: Required<SqlStoreOptions> = {
  poolSize: 10,
  connectTimeoutMs: 10_000,
  busyTimeoutMs: 5_000,
  lockWaitMs: 30_000,
  logger: {
    warn: (message) => console.warn(message),
    error: (message) => console.error(message),
  },
  migrations: MIGRATIONS,
};

/**
 * Opens the store named by `url`: `sqlite:///abs/path.db`, `sqlite://relative/path.db`,
 * `sqlite::memory:`, `postgres://…` or `postgresql://…`. Nothing is migrated until `migrate()`.
 */
export async function openSqlStore(url: string, options: SqlStoreOptions = {}): Promise<SqlStore> {
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0].toLowerCase();
  const name = scheme === undefined ? undefined : SCHEMES[scheme];
  if (name === undefined) {
    throw new SqlStoreConfigError(
      'unknown_database_scheme',
      `a database URL must start with one of ${Object.keys(SCHEMES).join(' ')} (got ${scheme ?? 'no scheme'})`,
    );
  }
  const entry = DIALECTS[name];
  await requireDriver(name, entry.driver);
  const dialect = await entry.open(url, { ...DEFAULTS, ...definedOnly(options) });
  return new OpenSqlStore(dialect, url);
}

class OpenSqlStore implements SqlStore {
  private readonly unitOfWork: SqlUnitOfWork;
  readonly rateLimits: RateLimitStore;
  readonly operationalStats: OperationalStats;
  private events: Promise<EventBus & { close?(): Promise<void> }> | undefined;
  private leadership: Promise<Leadership> | undefined;

  constructor(
    private readonly dialectImpl: Dialect,
    private readonly url: string,
  ) {
    this.unitOfWork = new SqlUnitOfWork(dialectImpl);
    this.rateLimits = new SqlRateLimitStore(dialectImpl);
    this.operationalStats = new SqlOperationalStats(dialectImpl);
  }

  poolStats(): PoolStats {
    return this.dialectImpl.poolStats();
  }

  get uow(): UnitOfWork {
    return this.unitOfWork;
  }

  get dialect(): DialectName {
    return this.dialectImpl.name;
  }

  openEventBus(options: PostgresEventBusOptions = {}): Promise<EventBus> {
    this.events ??=
      this.dialectImpl.name === 'postgres'
        ? import('./PostgresEventBus.js').then(({ PostgresEventBus }) => PostgresEventBus.open(this.url, options))
        : Promise.resolve(new InProcessEventBus());
    // A bus that failed to open is tried again by the next call instead of being kept.
    this.events.catch(() => {
      this.events = undefined;
    });
    return this.events;
  }

  /** One per store: two on one session would both take its locks (advisory locks are re-entrant). */
  openLeadership(): Promise<Leadership> {
    if (this.dialectImpl.name !== 'postgres') return Promise.resolve(new SoleLeadership());
    this.leadership ??= Promise.all([import('./PostgresLeadership.js'), this.openEventBus()]).then(
      ([{ PostgresLeadership }, bus]) => new PostgresLeadership(bus as PostgresEventBus),
    );
    this.leadership.catch(() => {
      this.leadership = undefined;
    });
    return this.leadership;
  }

  async migrate(): Promise<void> {
    try {
      await this.dialectImpl.migrate();
    } catch (error) {
      throw this.dialectImpl.translate(error);
    }
  }

  async pendingMigrations(): Promise<string[]> {
    try {
      return await this.dialectImpl.pendingMigrations();
    } catch (error) {
      throw this.dialectImpl.translate(error);
    }
  }

  async close(): Promise<void> {
    this.unitOfWork.markClosed();
    const events = await this.events?.catch(() => undefined);
    await events?.close?.();
    await this.dialectImpl.close();
  }
}

/** `sqlite:///abs/x.db` → `/abs/x.db`; `sqlite://rel/x.db` → `rel/x.db`; `sqlite::memory:` → `:memory:`. */
function sqliteLocation(url: string): string {
  const rest = url.slice('sqlite:'.length);
  const path = rest.startsWith('//') ? rest.slice(2) : rest;
  if (path === '') {
    throw new SqlStoreConfigError(
      'invalid_database_url',
      'a sqlite: URL needs a file path, e.g. sqlite:///var/lib/trellis/trellis.db',
    );
  }
  try {
    return decodeURIComponent(path.split(/[?#]/, 1)[0] as string);
  } catch (cause) {
    throw new SqlStoreConfigError('invalid_database_url', 'the sqlite: URL has a malformed %-escape', { cause });
  }
}

async function requireDriver(dialect: DialectName, driver: string): Promise<void> {
  try {
    await import(driver);
  } catch (cause) {
    const code = (cause as { code?: unknown }).code;
    if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') throw cause;
    throw new SqlStoreConfigError(
      'database_driver_missing',
      `the ${dialect} database driver is not installed: run \`npm install ${driver}\``,
      { cause },
    );
  }
}

function definedOnly(options: SqlStoreOptions): SqlStoreOptions {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
}
