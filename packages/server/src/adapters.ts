import {
  type ArtifactStore,
  type EventBus,
  type Leadership,
  MemoryRateLimitStore,
  type OperationalStats,
  type RateLimitStore,
  type UnitOfWork,
} from '@trellis/core';
import type { Logger } from '@trellis/http';
import type { PoolStats } from '@trellis/store-sql';
import { ConfigError } from './config.js';

export interface DatabaseAdapter {
  uow: UnitOfWork;
  /** Real-time events shared by every replica on this database. */
  events: EventBus;
  /**
   * Counters of the rate and failure limits: in the database on Postgres, so replicas share them;
   * in memory on SQLite (one server process; a write per failure would contend with real work).
   */
  rateLimits: RateLimitStore;
  /** Counts across owners for the metrics' gauges. */
  operationalStats: OperationalStats;
  /** Who runs the global background tasks: one replica per task on Postgres, this process on SQLite. */
  leadership: Leadership;
  /** The connection pool now and the time acquisitions waited (docs/observability.md). */
  poolStats(): PoolStats;
  migrate(): Promise<void>;
  /** The migrations this release has that the database lacks (empty when up to date). */
  pendingMigrations(): Promise<string[]>;
  close(): Promise<void>;
}

type Env = Record<string, string | undefined>;

export interface DatabaseOptions {
  /** Postgres: most connections of the store's pool (default 10); the event bus holds one more. */
  poolMax?: number;
}

/** `env` is the server's environment (DESIGN §5): adapters read their vendor's standard variables from it. */
type Loader<T> = (url: string, logger: Logger, env: Env) => Promise<T>;

/** Imports an optional adapter package, naming it when it is not installed. */
async function importAdapter<T>(name: string): Promise<T> {
  try {
    return (await import(name)) as T;
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_MODULE_NOT_FOUND' && String(error).includes(name)) {
      throw new ConfigError(`this configuration needs the package ${name}: run npm install ${name}`);
    }
    throw error;
  }
}

type StoreSqlModule = typeof import('@trellis/store-sql');

type DatabaseLoader = (url: string, logger: Logger, env: Env, options: DatabaseOptions) => Promise<DatabaseAdapter>;

/** The store's own warnings (dropped connections, a database ahead of this release) in the server's log. */
function storeLogger(logger: Logger) {
  return {
    warn: (message: string) => logger.warn({}, message),
    error: (message: string) => logger.error({}, message),
  };
}

/** DESIGN §1: adapters chosen by URL scheme through an explicit map of lazy loaders. */
export const DATABASE_LOADERS: Record<string, DatabaseLoader> = {
  sqlite: async (url, logger) => {
    const { openSqlStore } = await importAdapter<StoreSqlModule>('@trellis/store-sql');
    const store = await openSqlStore(url, { logger: storeLogger(logger) });
    return {
      uow: store.uow,
      events: await store.openEventBus(),
      rateLimits: new MemoryRateLimitStore(),
      operationalStats: store.operationalStats,
      leadership: await store.openLeadership(),
      poolStats: () => store.poolStats(),
      migrate: () => store.migrate(),
      pendingMigrations: () => store.pendingMigrations(),
      close: () => store.close(),
    };
  },
  postgres: async (url, logger, _env, options) => {
    const { openSqlStore } = await importAdapter<StoreSqlModule>('@trellis/store-sql');
    const store = await openSqlStore(url, { poolSize: options.poolMax, logger: storeLogger(logger) });
    const events = await store.openEventBus({
      onError: (error) => logger.warn({ err: error }, 'postgres event bus connection lost; reconnecting'),
    });
    return {
      uow: store.uow,
      events,
      rateLimits: store.rateLimits,
      operationalStats: store.operationalStats,
      leadership: await store.openLeadership(),
      poolStats: () => store.poolStats(),
      migrate: () => store.migrate(),
      pendingMigrations: () => store.pendingMigrations(),
      close: () => store.close(),
    };
  },
};
DATABASE_LOADERS.postgresql = DATABASE_LOADERS.postgres as DatabaseLoader;

type FsModule = typeof import('@trellis/artifacts-fs');
type S3Module = typeof import('@trellis/artifacts-s3');
type GcsModule = typeof import('@trellis/artifacts-gcs');

/** `s3:` and `gs:` need their optional peer dependency, `@trellis/artifacts-s3` or `-gcs`. */
export const ARTIFACT_LOADERS: Record<string, Loader<ArtifactStore>> = {
  file: async (url) => {
    const { openFsArtifactStore } = await importAdapter<FsModule>('@trellis/artifacts-fs');
    return openFsArtifactStore(url);
  },
  s3: async (url, _logger, env) => {
    const { openS3ArtifactStore } = await importAdapter<S3Module>('@trellis/artifacts-s3');
    return openS3ArtifactStore(url, { env });
  },
  gs: async (url, _logger, env) => {
    const { openGcsArtifactStore } = await importAdapter<GcsModule>('@trellis/artifacts-gcs');
    return openGcsArtifactStore(url, { env });
  },
};

function schemeOf(url: string, variable: string): string {
  const match = /^([a-z][a-z0-9+.-]*):/i.exec(url);
  if (!match?.[1]) throw new ConfigError(`${variable} must be a URL with a scheme (got "${url}")`);
  return match[1].toLowerCase();
}

function pick<L>(loaders: Record<string, L>, url: string, variable: string): L {
  const scheme = schemeOf(url, variable);
  const loader = loaders[scheme];
  if (!loader) {
    throw new ConfigError(
      `${variable}: unknown scheme "${scheme}:"; supported: ${Object.keys(loaders)
        .map((s) => `${s}:`)
        .join(', ')}`,
    );
  }
  return loader;
}

/** A URL the loaders do not know is a rejected promise, like any other failure to open. */
export async function openDatabase(
  url: string,
  logger: Logger,
  env: Env = process.env,
  options: DatabaseOptions = {},
): Promise<DatabaseAdapter> {
  return pick(DATABASE_LOADERS, url, 'DATABASE_URL')(url, logger, env, options);
}

export async function openArtifactStore(url: string, logger: Logger, env: Env = process.env): Promise<ArtifactStore> {
  return pick(ARTIFACT_LOADERS, url, 'TRELLIS_ARTIFACTS_URL')(url, logger, env);
}

/**
 * A server that does not migrate runs on a schema at least as new as its release: one a newer
 * release expanded is fine (docs/operations.md, Upgrades), one missing a migration is not.
 */
export async function requireMigrated(database: DatabaseAdapter): Promise<void> {
  const pending = await database.pendingMigrations();
  if (pending.length > 0) {
    throw new ConfigError(
      `the database lacks ${pending.length} migration(s) of this release (${pending.join(', ')}): ` +
        'run `trellis-server migrate` first (TRELLIS_MIGRATE_ON_START=false leaves migrations to it)',
    );
  }
}
