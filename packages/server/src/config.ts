import { findOpaBin } from './OpaPolicyCompiler.js';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT, type PageLimits } from '@trellis/core';

export const PROVIDERS = ['GITHUB', 'GITLAB', 'BITBUCKET', 'GOOGLE'] as const;
export type ProviderName = (typeof PROVIDERS)[number];

export interface OAuthAppConfig {
  clientId: string;
  clientSecret: string;
  baseUrl: string | null;
  /**
   * Git providers: the REST API's root (`TRELLIS_<PROVIDER>_API_URL`) when it is not the one
   * derived from the base URL (a proxy in front of the API, a test server); null: derived.
   */
  apiUrl: string | null;
  /** Label of the sign-in button (`TRELLIS_<PROVIDER>_DISPLAY_NAME`); the adapter's default when null. */
  displayName: string | null;
}

/** DESIGN §5: everything `trellis-server` reads from its environment. */
export interface ServerConfig {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string;
  /** Postgres: most connections of the store's pool (`TRELLIS_DB_POOL_MAX`); the event bus adds one. */
  databasePoolMax: number;
  /**
   * Whether `serve` applies pending migrations before serving (`TRELLIS_MIGRATE_ON_START`, default
   * true). False: only `trellis-server migrate` changes the schema, and a server whose database
   * lacks a migration of its release refuses to start.
   */
  migrateOnStart: boolean;
  artifactsUrl: string;
  webUrl: string;
  /** False when TRELLIS_WEB_URL was not set: the web URL then follows the port actually bound. */
  webUrlExplicit: boolean;
  cliJwtSecret: string;
  /**
   * AES-256-GCM keys of provider tokens at rest (`TRELLIS_ENCRYPTION_KEY`, comma-separated: the
   * first encrypts, all decrypt). Empty: one key derived (HKDF) from `CLI_JWT_SECRET`.
   */
  encryptionKeys: Uint8Array[];
  releaseApiSecret: string | null;
  /** Null when an OAuth provider is configured and no token was set. */
  bootstrapToken: string | null;
  /** A generated bootstrap token works once; one set by the operator works until changed. */
  bootstrapTokenOneTime: boolean;
  bootstrapEmail: string;
  providers: Partial<Record<ProviderName, OAuthAppConfig>>;
  heartbeatTimeoutSeconds: number;
  lostJobTimeoutSeconds: number;
  /** `limit` of every list endpoint: the default and the largest allowed (issue 10 §2). */
  pageLimits: PageLimits;
  /** How often queued heartbeats are written together (0: each with its request). */
  heartbeatFlushSeconds: number;
  /** How often the lost-agent sweep runs. */
  sweepIntervalSeconds: number;
  /** How often this replica looks for due drift checks (issue 14). */
  driftSchedulerIntervalSeconds: number;
  /**
   * Express `trust proxy` (`TRELLIS_TRUST_PROXY`): whose `X-Forwarded-For` gives the client
   * address the per-client limits count. False: nobody's (the socket's peer is the client).
   */
  trustProxy: false | number | string[];
  bootstrapFailureLimit: number;
  bootstrapFailureWindowSeconds: number;
  workerAuthFailureLimit: number;
  workerAuthFailureWindowSeconds: number;
  /** How long verified worker credentials are reused without a database read (0: never). */
  workerAuthCacheSeconds: number;
  claimLongPollsPerWorker: number;
  claimLongPollsTotal: number;
  /** Caps and retention (docs/security.md, Caps and retention). */
  maxStateBytes: number;
  stateVersionsKept: number;
  maxExecutionMetadataBytes: number;
  maxLogBytesPerJob: number;
  logGraceMinutes: number;
  logRetentionDays: number;
  /** Audit entries older than this are pruned (0: kept forever). */
  auditRetentionDays: number;
  /** How often logs and audit entries past their retention are deleted. */
  retentionIntervalSeconds: number;
  /** Notifications (docs/notifications.md): delivery worker interval, retry base, timeout, private receivers. */
  notificationIntervalSeconds: number;
  /** Feedback at the git provider (docs/git.md): how often due commit statuses and comments are sent. */
  vcsFeedbackIntervalSeconds: number;
  notificationRetryBaseSeconds: number;
  notificationTimeoutSeconds: number;
  notificationsAllowPrivateUrls: boolean;
  /**
   * The Open Policy Agent binary that checks policy modules when saved (`TRELLIS_OPA_BIN`, else
   * `opa` on PATH); null: none, modules are checked by the agents only (docs/policies.md).
   */
  opaBin: string | null;
  /** Policy checks at once (`TRELLIS_POLICY_CHECKS_CONCURRENCY`, 2) and waiting (`TRELLIS_POLICY_CHECKS_QUEUE`, 8). */
  policyChecks: { concurrency: number; queue: number };
  /** Workload identity (docs/workload-identity.md): the OIDC issuer of job tokens. */
  oidc: {
    /** `TRELLIS_OIDC_ISSUER`; null: the public URL (`webUrl`, following the bound port when unset). */
    issuer: string | null;
    algorithm: 'RS256' | 'ES256';
    tokenLifetimeSeconds: number;
    /** 0: keys change only with `trellis-server keys rotate`. */
    keyRotationDays: number;
  };
  /**
   * `GET /metrics` (docs/observability.md): behind the bearer `token` on the main port
   * (`TRELLIS_METRICS_TOKEN`), and/or on its own `port` (`TRELLIS_METRICS_PORT`, then not on the
   * main port). Both null: metrics are off.
   */
  metrics: { token: string | null; port: number | null };
  /** Traces go to this OTLP/HTTP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT`); null: traces are off. */
  otlpEndpoint: string | null;
  /** Live-log streams: bytes one may hold for a slow client, and how many may be open. */
  logStreams: { maxBufferBytes: number; perUser: number; perJob: number };
  /**
   * Secrets generated by `loadConfig` (name to value) that are not in the data dir yet:
   * `ensureGeneratedSecrets` keeps them. Empty when every secret was set or already kept.
   */
  generatedSecrets: Record<string, string>;
  /** Things worth telling the operator at start-up (generated secrets and the like). */
  warnings: string[];
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
  }
  return value;
}

function flag(env: Env, name: string): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  throw new ConfigError(`${name} must be true or false (got "${raw}")`);
}

function originOf(url: string, name: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http');
    return parsed.origin;
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL (got "${url}")`);
  }
}

/** Where the embedded default keeps the secrets it generated (mode 0600, in the data dir). */
export function secretsFile(dataDir: string): string {
  return join(dataDir, 'secrets.json');
}

function readSecrets(dataDir: string): Record<string, string> {
  const file = secretsFile(dataDir);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>) : {};
}

/**
 * Makes the secrets `loadConfig` generated in memory last: writes them to the data dir's
 * `secrets.json` (mode 0600), so restarts keep sessions and CLI logins valid. Reading the
 * configuration never writes; the server calls this when it starts (`createControlPlane`, the
 * `trellis-server` bin). A value another process kept meanwhile wins over the one generated here.
 * A secret the caller replaced in `config` (e.g. `createControlPlane({ config })`) is not kept.
 */
export function ensureGeneratedSecrets(config: ServerConfig): void {
  const pending = Object.entries(config.generatedSecrets);
  if (pending.length === 0) return;
  const secrets = readSecrets(config.dataDir);
  let changed = false;
  for (const [name, value] of pending) {
    if (name === 'CLI_JWT_SECRET' && config.cliJwtSecret !== value) continue;
    const kept = secrets[name];
    if (kept) {
      if (name === 'CLI_JWT_SECRET') config.cliJwtSecret = kept;
    } else {
      secrets[name] = value;
      changed = true;
    }
  }
  config.generatedSecrets = {};
  if (!changed) return;
  const file = secretsFile(config.dataDir);
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  writeFileSync(file, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
}

/**
 * `TRELLIS_ENCRYPTION_KEY`: one or more comma-separated 32-byte keys, each as 64 hex digits or
 * base64/base64url (`openssl rand -base64 32`).
 */
function encryptionKeys(value: string | undefined): Uint8Array[] {
  if (!value) return [];
  return value.split(',').map((raw, index) => {
    const text = raw.trim();
    const key = /^[0-9a-f]{64}$/i.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
    if (key.length !== 32 || (!/^[0-9a-f]{64}$/i.test(text) && !/^[A-Za-z0-9+/_-]{43}=?$/.test(text))) {
      throw new ConfigError(
        `TRELLIS_ENCRYPTION_KEY: key ${index + 1} must be 32 bytes as 64 hex digits or base64 (openssl rand -base64 32)`,
      );
    }
    return new Uint8Array(key);
  });
}

/** The named subnets of express's `trust proxy` (proxy-addr). */
const TRUST_PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * `TRELLIS_TRUST_PROXY`: `false` (default), a hop count, or a comma-separated list of addresses,
 * CIDRs and the names loopback, linklocal, uniquelocal. `true` (believe any client) is refused:
 * every client could then pick the address it is limited by.
 */
function trustProxy(value: string | undefined): ServerConfig['trustProxy'] {
  const text = (value ?? '').trim();
  if (text === '' || text === 'false') return false;
  if (/^\d+$/.test(text)) {
    const hops = Number(text);
    if (hops > 10) throw new ConfigError(`TRELLIS_TRUST_PROXY: at most 10 proxy hops (got ${hops})`);
    return hops === 0 ? false : hops;
  }
  if (text === 'true') {
    throw new ConfigError(
      'TRELLIS_TRUST_PROXY=true would let any client choose the address it is rate limited by; ' +
        'give the number of proxies in front of the server or their addresses (e.g. 1, or 10.0.0.0/8)',
    );
  }
  return text.split(',').map((raw) => {
    const entry = raw.trim();
    if (TRUST_PROXY_NAMES.has(entry)) return entry;
    const [address = '', prefix, ...rest] = entry.split('/');
    const family = isIP(address);
    const bits = family === 4 ? 32 : 128;
    const prefixOk = prefix === undefined || (/^\d+$/.test(prefix) && Number(prefix) <= bits);
    if (family === 0 || !prefixOk || rest.length > 0) {
      throw new ConfigError(
        `TRELLIS_TRUST_PROXY: "${entry}" is not an IP address, a CIDR or one of loopback, linklocal, uniquelocal ` +
          '(or give a hop count, or false)',
      );
    }
    return entry;
  });
}

/** An operator-set bootstrap token signs in the administrator: it must not be guessable. */
export const MIN_BOOTSTRAP_TOKEN_LENGTH = 32;

export function loadConfig(env: Env = process.env, cwd = process.cwd()): ServerConfig {
  const warnings: string[] = [];
  const port = integer(env, 'PORT', 8080, 0, 65535);
  const host = env.HOST || '127.0.0.1';
  const dataDirRaw = env.TRELLIS_DATA_DIR || './.trellis';
  const dataDir = isAbsolute(dataDirRaw) ? dataDirRaw : resolve(cwd, dataDirRaw);
  const databaseUrl = env.DATABASE_URL || `sqlite://${join(dataDir, 'trellis.db')}`;
  const artifactsUrl = env.TRELLIS_ARTIFACTS_URL || pathToFileURL(join(dataDir, 'artifacts')).href;
  const webUrl = (env.TRELLIS_WEB_URL || `http://localhost:${port}`).replace(/\/+$/, '');
  originOf(webUrl, 'TRELLIS_WEB_URL');

  const generatedSecrets: Record<string, string> = {};
  let cliJwtSecret = env.CLI_JWT_SECRET ?? '';
  if (cliJwtSecret === '') {
    // Read only: a secret generated now is kept by `ensureGeneratedSecrets` when the server starts.
    const kept = readSecrets(dataDir).CLI_JWT_SECRET;
    cliJwtSecret = kept || randomBytes(48).toString('base64url');
    if (!kept) generatedSecrets.CLI_JWT_SECRET = cliJwtSecret;
    warnings.push(
      `CLI_JWT_SECRET is not set: using a generated secret kept in ${secretsFile(dataDir)}. ` +
        'Set CLI_JWT_SECRET (the same on every replica) when you run more than one server.',
    );
  } else if (Buffer.byteLength(cliJwtSecret, 'utf8') < 32) {
    throw new ConfigError('CLI_JWT_SECRET must be at least 32 bytes');
  }

  const providers: ServerConfig['providers'] = {};
  for (const provider of PROVIDERS) {
    const clientId = env[`TRELLIS_${provider}_CLIENT_ID`];
    const clientSecret = env[`TRELLIS_${provider}_CLIENT_SECRET`];
    if (!clientId && !clientSecret) continue;
    if (!clientId || !clientSecret) {
      throw new ConfigError(`TRELLIS_${provider}_CLIENT_ID and TRELLIS_${provider}_CLIENT_SECRET must be set together`);
    }
    const baseUrl = env[`TRELLIS_${provider}_BASE_URL`] || null;
    if (baseUrl !== null) originOf(baseUrl, `TRELLIS_${provider}_BASE_URL`);
    const apiUrl = env[`TRELLIS_${provider}_API_URL`] || null;
    if (apiUrl !== null) originOf(apiUrl, `TRELLIS_${provider}_API_URL`);
    providers[provider] = {
      clientId,
      clientSecret,
      baseUrl,
      apiUrl,
      displayName: env[`TRELLIS_${provider}_DISPLAY_NAME`] || null,
    };
  }

  let bootstrapToken: string | null = env.TRELLIS_BOOTSTRAP_TOKEN || null;
  if (bootstrapToken !== null && bootstrapToken.length < MIN_BOOTSTRAP_TOKEN_LENGTH) {
    throw new ConfigError(
      `TRELLIS_BOOTSTRAP_TOKEN must be at least ${MIN_BOOTSTRAP_TOKEN_LENGTH} characters ` +
        `(got ${bootstrapToken.length}); generate one with: openssl rand -base64 32`,
    );
  }
  const bootstrapTokenOneTime = bootstrapToken === null;
  if (bootstrapToken === null && Object.keys(providers).length === 0) {
    bootstrapToken = randomBytes(24).toString('base64url');
  }

  return {
    port,
    host,
    dataDir,
    databaseUrl,
    databasePoolMax: integer(env, 'TRELLIS_DB_POOL_MAX', 10, 2, 1000),
    migrateOnStart: !env.TRELLIS_MIGRATE_ON_START || flag(env, 'TRELLIS_MIGRATE_ON_START'),
    artifactsUrl,
    webUrl,
    webUrlExplicit: Boolean(env.TRELLIS_WEB_URL),
    cliJwtSecret,
    encryptionKeys: encryptionKeys(env.TRELLIS_ENCRYPTION_KEY),
    releaseApiSecret: env.RELEASE_API_SECRET || null,
    bootstrapToken,
    bootstrapTokenOneTime,
    bootstrapEmail: env.TRELLIS_BOOTSTRAP_EMAIL || 'admin@localhost',
    providers,
    heartbeatTimeoutSeconds: integer(env, 'TRELLIS_HEARTBEAT_TIMEOUT_S', 60, 5, 86_400),
    lostJobTimeoutSeconds: integer(env, 'TRELLIS_LOST_JOB_TIMEOUT_S', 120, 5, 86_400),
    heartbeatFlushSeconds: integer(env, 'TRELLIS_HEARTBEAT_FLUSH_S', 1, 0, 10),
    sweepIntervalSeconds: integer(env, 'TRELLIS_SWEEP_INTERVAL_S', 15, 1, 3600),
    driftSchedulerIntervalSeconds: integer(env, 'TRELLIS_DRIFT_SCHEDULER_INTERVAL_S', 60, 1, 3600),
    trustProxy: trustProxy(env.TRELLIS_TRUST_PROXY),
    bootstrapFailureLimit: integer(env, 'TRELLIS_BOOTSTRAP_FAILURE_LIMIT', 10, 1, 10_000),
    bootstrapFailureWindowSeconds: integer(env, 'TRELLIS_BOOTSTRAP_FAILURE_WINDOW_S', 900, 1, 86_400),
    workerAuthFailureLimit: integer(env, 'TRELLIS_WORKER_AUTH_FAILURE_LIMIT', 30, 1, 100_000),
    workerAuthFailureWindowSeconds: integer(env, 'TRELLIS_WORKER_AUTH_FAILURE_WINDOW_S', 60, 1, 86_400),
    workerAuthCacheSeconds: integer(env, 'TRELLIS_WORKER_AUTH_CACHE_S', 5, 0, 60),
    claimLongPollsPerWorker: integer(env, 'TRELLIS_CLAIM_LONG_POLLS_PER_WORKER', 4, 1, 100),
    claimLongPollsTotal: integer(env, 'TRELLIS_CLAIM_LONG_POLLS_TOTAL', 1000, 1, 100_000),
    maxStateBytes: integer(env, 'TRELLIS_MAX_STATE_BYTES', 64 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    stateVersionsKept: integer(env, 'TRELLIS_STATE_VERSIONS_KEPT', 100, 1, 1_000_000),
    maxExecutionMetadataBytes: integer(
      env,
      'TRELLIS_MAX_EXECUTION_METADATA_BYTES',
      1024 * 1024,
      1024,
      64 * 1024 * 1024,
    ),
    maxLogBytesPerJob: integer(env, 'TRELLIS_MAX_LOG_BYTES_PER_JOB', 64 * 1024 * 1024, 1024, 16 * 1024 * 1024 * 1024),
    logGraceMinutes: integer(env, 'TRELLIS_LOG_GRACE_MINUTES', 5, 0, 1440),
    logRetentionDays: integer(env, 'TRELLIS_LOG_RETENTION_DAYS', 90, 0, 36_500),
    auditRetentionDays: integer(env, 'TRELLIS_AUDIT_RETENTION_DAYS', 365, 0, 36_500),
    retentionIntervalSeconds: integer(env, 'TRELLIS_RETENTION_INTERVAL_S', 3600, 1, 86_400),
    notificationIntervalSeconds: integer(env, 'TRELLIS_NOTIFICATIONS_INTERVAL_S', 5, 1, 3600),
    vcsFeedbackIntervalSeconds: integer(env, 'TRELLIS_VCS_FEEDBACK_INTERVAL_S', 5, 1, 3600),
    notificationRetryBaseSeconds: integer(env, 'TRELLIS_NOTIFICATIONS_RETRY_BASE_S', 10, 1, 3600),
    notificationTimeoutSeconds: integer(env, 'TRELLIS_NOTIFICATIONS_TIMEOUT_S', 10, 1, 120),
    notificationsAllowPrivateUrls: flag(env, 'TRELLIS_NOTIFICATIONS_ALLOW_PRIVATE_URLS'),
    opaBin: opaBinOf(env, warnings),
    policyChecks: {
      concurrency: integer(env, 'TRELLIS_POLICY_CHECKS_CONCURRENCY', 2, 1, 64),
      queue: integer(env, 'TRELLIS_POLICY_CHECKS_QUEUE', 8, 0, 1000),
    },
    logStreams: {
      maxBufferBytes: integer(env, 'TRELLIS_STREAM_MAX_BUFFER_BYTES', 1024 * 1024, 64 * 1024, 64 * 1024 * 1024),
      perUser: integer(env, 'TRELLIS_STREAMS_PER_USER', 20, 1, 10_000),
      perJob: integer(env, 'TRELLIS_STREAMS_PER_JOB', 200, 1, 100_000),
    },
    pageLimits: pageLimits(env),
    metrics: metricsSettings(env),
    otlpEndpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT || null,
    oidc: oidcSettings(env, webUrl, warnings),
    generatedSecrets,
    warnings,
  };
}

/** The OPA binary policy modules are checked with; a warning when there is none. */
function opaBinOf(env: Env, warnings: string[]): string | null {
  const bin = findOpaBin(env);
  if (bin === null) {
    warnings.push(
      'no Open Policy Agent binary (TRELLIS_OPA_BIN, or opa on PATH): policy modules are not compiled when saved; agents report compile errors when they evaluate them',
    );
  }
  return bin;
}

/** `TRELLIS_PAGE_LIMIT_DEFAULT` (50) and `TRELLIS_PAGE_LIMIT_MAX` (200); the default never exceeds the max. */
function pageLimits(env: Env): PageLimits {
  const maxLimit = integer(env, 'TRELLIS_PAGE_LIMIT_MAX', MAX_PAGE_LIMIT, 1, 1000);
  const defaultLimit = integer(env, 'TRELLIS_PAGE_LIMIT_DEFAULT', Math.min(DEFAULT_PAGE_LIMIT, maxLimit), 1, maxLimit);
  return { defaultLimit, maxLimit };
}

/** Local development: an issuer on this machine may be plain http; anything else must be https. */
export function isLoopbackUrl(url: string): boolean {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127\./.test(host);
}

const OIDC_ALGORITHMS = ['RS256', 'ES256'] as const;

/** `TRELLIS_OIDC_*` (issue 16): issuer, algorithm of new keys, token lifetime, key rotation interval. */
function oidcSettings(env: Env, webUrl: string, warnings: string[]): ServerConfig['oidc'] {
  const raw = env.TRELLIS_OIDC_ISSUER?.trim() || null;
  let issuer: string | null = null;
  if (raw !== null) {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new ConfigError(`TRELLIS_OIDC_ISSUER must be a URL (got "${raw}")`);
    }
    if (url.search || url.hash) throw new ConfigError('TRELLIS_OIDC_ISSUER must have no query or fragment');
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackUrl(raw))) {
      throw new ConfigError(
        `TRELLIS_OIDC_ISSUER must be an https:// URL (plain http only on this machine, for local development; got "${raw}")`,
      );
    }
    issuer = raw.replace(/\/+$/, '');
  } else if (!webUrl.startsWith('https://') && !isLoopbackUrl(webUrl)) {
    warnings.push(
      `the OIDC issuer defaults to the public URL ${webUrl}, which is not https: clouds will refuse its job tokens; ` +
        'set TRELLIS_WEB_URL or TRELLIS_OIDC_ISSUER to an https:// URL',
    );
  }
  const algorithm = env.TRELLIS_OIDC_SIGNING_ALGORITHM || 'RS256';
  if (!(OIDC_ALGORITHMS as readonly string[]).includes(algorithm)) {
    throw new ConfigError(`TRELLIS_OIDC_SIGNING_ALGORITHM must be RS256 or ES256 (got "${algorithm}")`);
  }
  return {
    issuer,
    algorithm: algorithm as 'RS256' | 'ES256',
    tokenLifetimeSeconds: integer(env, 'TRELLIS_OIDC_TOKEN_LIFETIME_S', 3600, 300, 43_200),
    keyRotationDays: integer(env, 'TRELLIS_OIDC_KEY_ROTATION_DAYS', 90, 0, 3650),
  };
}

/** A metrics token shorter than this is refused: it is all that guards the endpoint. */
const MIN_METRICS_TOKEN_LENGTH = 16;

function metricsSettings(env: Env): ServerConfig['metrics'] {
  const token = env.TRELLIS_METRICS_TOKEN || null;
  if (token !== null && token.length < MIN_METRICS_TOKEN_LENGTH) {
    throw new ConfigError(
      `TRELLIS_METRICS_TOKEN must be at least ${MIN_METRICS_TOKEN_LENGTH} characters (got ${token.length}); ` +
        'generate one with: openssl rand -base64 32',
    );
  }
  const port = env.TRELLIS_METRICS_PORT ? integer(env, 'TRELLIS_METRICS_PORT', 0, 0, 65_535) : null;
  return { token, port };
}
