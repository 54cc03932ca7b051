import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export const PROVIDERS = ['GITHUB', 'GITLAB', 'BITBUCKET', 'GOOGLE'] as const;
export type ProviderName = (typeof PROVIDERS)[number];

export interface OAuthAppConfig {
  clientId: string;
  clientSecret: string;
  baseUrl: string | null;
  /** Label of the sign-in button (`TRELLIS_<PROVIDER>_DISPLAY_NAME`); the adapter's default when null. */
  displayName: string | null;
}

/** DESIGN §5: everything `trellis-server` reads from its environment. */
export interface ServerConfig {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string;
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
  /** How often the lost-agent sweep runs. */
  sweepIntervalSeconds: number;
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

function originOf(url: string, name: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http');
    return parsed.origin;
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL (got "${url}")`);
  }
}

/**
 * Secrets the embedded default generates on first start and keeps in the data dir (mode 0600),
 * so restarts keep sessions and CLI logins valid.
 */
function generatedSecret(dataDir: string, name: string): string {
  const file = join(dataDir, 'secrets.json');
  const secrets: Record<string, string> = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
  let value = secrets[name];
  if (!value) {
    value = randomBytes(48).toString('base64url');
    secrets[name] = value;
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    writeFileSync(file, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
  }
  return value;
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

  let cliJwtSecret = env.CLI_JWT_SECRET ?? '';
  if (cliJwtSecret === '') {
    cliJwtSecret = generatedSecret(dataDir, 'CLI_JWT_SECRET');
    warnings.push(
      `CLI_JWT_SECRET is not set: using a generated secret kept in ${join(dataDir, 'secrets.json')}. ` +
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
    providers[provider] = {
      clientId,
      clientSecret,
      baseUrl,
      displayName: env[`TRELLIS_${provider}_DISPLAY_NAME`] || null,
    };
  }

  let bootstrapToken: string | null = env.TRELLIS_BOOTSTRAP_TOKEN || null;
  const bootstrapTokenOneTime = bootstrapToken === null;
  if (bootstrapToken === null && Object.keys(providers).length === 0) {
    bootstrapToken = randomBytes(24).toString('base64url');
  }

  return {
    port,
    host,
    dataDir,
    databaseUrl,
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
    sweepIntervalSeconds: integer(env, 'TRELLIS_SWEEP_INTERVAL_S', 15, 1, 3600),
    warnings,
  };
}
