/**
 * trellis-server's settings are one declarative table: every variable a row, parsed by it, typed
 * by it and documented from it; a mistake names the variable and what was wrong (never a secret's
 * value); the configuration read is frozen.
 */
import { ConfigError, loadConfig, SERVER_SETTINGS, type Setting, type SettingsTable } from '@trellis/server';
import { describe, expect, it } from 'vitest';

const BASE = { TRELLIS_DATA_DIR: '/tmp/trellis-settings-test', CLI_JWT_SECRET: 'x'.repeat(40) };

function rows(table: SettingsTable): Setting<unknown>[] {
  return Object.values(table).flatMap((entry) => {
    if (entry.kind === 'setting') return [entry as Setting<unknown>];
    if (entry.kind === 'family') return [(entry as { setting: Setting<unknown> }).setting];
    return rows(entry as SettingsTable);
  });
}

function errorOf(env: Record<string, string>): string {
  try {
    loadConfig({ ...BASE, ...env });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error(`${JSON.stringify(env)} was accepted`);
}

describe('the settings table', () => {
  it('has one row per variable, each described', () => {
    const all = rows(SERVER_SETTINGS);
    const names = all.map((row) => row.env);
    expect(new Set(names).size).toBe(names.length);
    // A former name is never another row's name, nor the former name of two rows.
    const former = all.flatMap((row) => row.deprecatedEnv);
    expect(new Set([...names, ...former]).size).toBe(names.length + former.length);
    for (const row of all) {
      expect(row.env, row.env).toMatch(/^[A-Z][A-Z0-9_<>]*$/);
      expect(row.description.length, row.env).toBeGreaterThan(10);
      expect(row.accepts.length, row.env).toBeGreaterThan(0);
    }
    expect(names).toEqual(
      expect.arrayContaining(['PORT', 'DATABASE_URL', 'TRELLIS_<PROVIDER>_CLIENT_SECRET', 'TRELLIS_LOG_LEVEL']),
    );
  });

  it('keeps the defaults of every variable', () => {
    const config = loadConfig({ TRELLIS_DATA_DIR: '/srv/trellis', TRELLIS_OPA_BIN: '/usr/bin/opa' }, '/');
    expect(config).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      dataDir: '/srv/trellis',
      databaseUrl: 'sqlite:///srv/trellis/trellis.db',
      databasePoolMax: 10,
      migrateOnStart: true,
      artifactsUrl: 'file:///srv/trellis/artifacts',
      webUrl: 'http://localhost:8080',
      webUrlExplicit: false,
      releaseApiSecret: null,
      bootstrapTokenOneTime: true,
      bootstrapEmail: 'admin@localhost',
      providers: {},
      encryptionKeys: [],
      heartbeatTimeoutSeconds: 60,
      lostJobTimeoutSeconds: 120,
      heartbeatFlushSeconds: 1,
      sweepIntervalSeconds: 15,
      driftSchedulerIntervalSeconds: 60,
      trustProxy: false,
      bootstrapFailureLimit: 10,
      bootstrapFailureWindowSeconds: 900,
      workerAuthFailureLimit: 30,
      workerAuthFailureWindowSeconds: 60,
      workerAuthCacheSeconds: 5,
      apiTokenAuthCacheSeconds: 5,
      claimLongPollsPerWorker: 4,
      claimLongPollsTotal: 1000,
      maxStateBytes: 64 * 1024 * 1024,
      stateVersionsKept: 100,
      maxExecutionMetadataBytes: 1024 * 1024,
      maxLogBytesPerJob: 64 * 1024 * 1024,
      logGraceMinutes: 5,
      logRetentionDays: 90,
      auditRetentionDays: 365,
      retentionIntervalSeconds: 3600,
      notificationTimeoutSeconds: 10,
      notificationsAllowPrivateUrls: false,
      opaBin: '/usr/bin/opa',
      oidc: { issuer: null, algorithm: 'RS256', tokenLifetimeSeconds: 3600, keyRotationDays: 90 },
      logLevel: 'info',
      metrics: { token: null, port: null },
      otlpEndpoint: null,
      logStreams: { maxBufferBytes: 1024 * 1024, perUser: 20, perJob: 200 },
      pageLimits: { defaultLimit: 50, maxLimit: 200 },
      outbox: {
        intervalSeconds: 5,
        batchSize: 20,
        leaseSeconds: 120,
        retryBaseSeconds: 10,
        retryMaxSeconds: 3600,
        retryWindowSeconds: 86_400,
        vcsFeedbackMaxAttempts: 10,
      },
    });
    expect(config.bootstrapToken).toMatch(/^[\w-]{32}$/);
  });

  it('names the variable and what was wrong', () => {
    expect(errorOf({ TRELLIS_LOST_JOB_TIMEOUT_S: '1' })).toBe(
      'TRELLIS_LOST_JOB_TIMEOUT_S must be an integer from 5 to 86400 (got "1")',
    );
    expect(errorOf({ TRELLIS_SWEEP_INTERVAL_S: 'often' })).toBe(
      'TRELLIS_SWEEP_INTERVAL_S must be an integer from 1 to 3600 (got "often")',
    );
    expect(errorOf({ TRELLIS_MIGRATE_ON_START: 'yes' })).toBe(
      'TRELLIS_MIGRATE_ON_START must be true or false (got "yes")',
    );
    expect(errorOf({ TRELLIS_LOG_LEVEL: 'loud' })).toBe(
      'TRELLIS_LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent (got "loud")',
    );
    expect(errorOf({ TRELLIS_WEB_URL: 'ftp://example.com' })).toBe(
      'TRELLIS_WEB_URL must be an http(s) URL (got "ftp://example.com")',
    );
    expect(errorOf({ TRELLIS_BITBUCKET_BASE_URL: 'bitbucket.internal' })).toBe(
      'TRELLIS_BITBUCKET_BASE_URL must be an http(s) URL (got "bitbucket.internal")',
    );
    expect(errorOf({ TRELLIS_PAGE_LIMIT_MAX: '20', TRELLIS_PAGE_LIMIT_DEFAULT: '30' })).toMatch(
      /^TRELLIS_PAGE_LIMIT_DEFAULT must be an integer from 1 to 20/,
    );
  });

  it('never repeats a secret in a message', () => {
    const short = 'a-short-secret';
    for (const name of [
      'CLI_JWT_SECRET',
      'TRELLIS_BOOTSTRAP_TOKEN',
      'TRELLIS_METRICS_TOKEN',
      'TRELLIS_ENCRYPTION_KEY',
    ]) {
      const message = errorOf({ [name]: short });
      expect(message, name).toMatch(new RegExp(`^${name}`));
      expect(message, name).not.toContain(short);
    }
    expect(errorOf({ CLI_JWT_SECRET: short })).toBe(`CLI_JWT_SECRET must be at least 32 bytes (got ${short.length})`);
  });

  it('takes an unset and an empty variable alike, as the default', () => {
    expect(loadConfig({ ...BASE, TRELLIS_SWEEP_INTERVAL_S: '', PORT: '' })).toMatchObject({
      sweepIntervalSeconds: 15,
      port: 8080,
    });
    expect(loadConfig({ ...BASE, TRELLIS_PAGE_LIMIT_MAX: '20' }).pageLimits).toEqual({
      defaultLimit: 20,
      maxLimit: 20,
    });
  });

  it('reads a deprecated name while its replacement is unset, and warns of it', () => {
    const old = loadConfig({ ...BASE, TRELLIS_VCS_FEEDBACK_INTERVAL_S: '30', TRELLIS_NOTIFICATIONS_RETRY_BASE_S: '4' });
    expect(old.outbox).toMatchObject({ intervalSeconds: 30, retryBaseSeconds: 4 });
    expect(old.warnings).toEqual(
      expect.arrayContaining([
        'TRELLIS_VCS_FEEDBACK_INTERVAL_S is deprecated: set TRELLIS_OUTBOX_INTERVAL_S instead',
        'TRELLIS_NOTIFICATIONS_RETRY_BASE_S is deprecated: set TRELLIS_OUTBOX_RETRY_BASE_S instead',
      ]),
    );
    // The first former name set wins, in the order the row lists them.
    expect(
      loadConfig({ ...BASE, TRELLIS_VCS_FEEDBACK_INTERVAL_S: '30', TRELLIS_NOTIFICATIONS_INTERVAL_S: '7' }).outbox
        .intervalSeconds,
    ).toBe(7);
    const both = loadConfig({ ...BASE, TRELLIS_OUTBOX_INTERVAL_S: '2', TRELLIS_NOTIFICATIONS_INTERVAL_S: '7' });
    expect(both.outbox.intervalSeconds).toBe(2);
    expect(both.warnings).toContain(
      'TRELLIS_NOTIFICATIONS_INTERVAL_S is deprecated and ignored: TRELLIS_OUTBOX_INTERVAL_S is set',
    );
    expect(errorOf({ TRELLIS_NOTIFICATIONS_INTERVAL_S: '0' })).toBe(
      'TRELLIS_NOTIFICATIONS_INTERVAL_S must be an integer from 1 to 3600 (got "0")',
    );
    expect(loadConfig(BASE).warnings.filter((warning) => warning.includes('deprecated'))).toEqual([]);
  });

  it('is frozen once read: nothing changes it after start-up', () => {
    const config = loadConfig({ ...BASE, TRELLIS_ENCRYPTION_KEY: 'a'.repeat(64) });
    expect(Object.isFrozen(config)).toBe(true);
    for (const part of [config.oidc, config.metrics, config.logStreams, config.pageLimits, config.warnings]) {
      expect(Object.isFrozen(part)).toBe(true);
    }
    expect(Object.isFrozen(config.encryptionKeys)).toBe(true);
    expect(() => {
      (config as { sweepIntervalSeconds: number }).sweepIntervalSeconds = 1;
    }).toThrow(TypeError);
    expect(() => {
      (config.oidc as { issuer: string | null }).issuer = 'https://elsewhere.example.com';
    }).toThrow(TypeError);
  });
});
