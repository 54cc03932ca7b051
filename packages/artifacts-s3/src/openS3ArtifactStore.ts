import { S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { ValidationError } from '@trellis/core';
import { normalizePrefix } from '@trellis/core';
import { S3ArtifactStore } from './S3ArtifactStore.js';

const MiB = 1024 * 1024;

type Env = Record<string, string | undefined>;

/** Everything `TRELLIS_ARTIFACTS_URL=s3://…` and the AWS environment say about the store. */
export interface S3StoreSettings {
  bucket: string;
  prefix: string;
  /** Undefined: the SDK's own lookup (the shared config file of `AWS_PROFILE`), else us-east-1. */
  region: string | undefined;
  /** Undefined: AWS itself. */
  endpoint: string | undefined;
  forcePathStyle: boolean;
  partSize: number;
  queueSize: number;
  bufferBytes: number;
  /** Set when the environment names a key pair; otherwise the SDK's default provider chain. */
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | undefined;
}

const OPTIONS = ['region', 'endpoint', 'path_style', 'part_size_mib', 'queue_size', 'buffer_mib'] as const;

/**
 * `s3://bucket/prefix?region=…&endpoint=…&path_style=true&part_size_mib=5&queue_size=1&buffer_mib=16`.
 * Options in the URL win over the standard AWS environment: `AWS_REGION` (or
 * `AWS_DEFAULT_REGION`), `AWS_ENDPOINT_URL_S3` (or `AWS_ENDPOINT_URL`), `AWS_S3_FORCE_PATH_STYLE`,
 * and `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`/`AWS_SESSION_TOKEN` (without them the SDK's
 * default chain applies: `AWS_PROFILE`, SSO, web identity, ECS and EC2 roles).
 */
export function parseS3Url(url: string, env: Env = process.env): S3StoreSettings {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalidUrl(url, 'is not a URL (expected s3://bucket/prefix)');
  }
  if (parsed.protocol !== 's3:') throw invalidUrl(url, `has scheme "${parsed.protocol}", not "s3:"`);
  if (parsed.username || parsed.password) {
    throw invalidUrl(url, 'must not hold credentials; use AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or a role');
  }
  const bucket = parsed.hostname;
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    throw invalidUrl(
      url,
      'needs a bucket name of 3-63 lowercase letters, digits, dots and hyphens (s3://bucket/prefix)',
    );
  }
  for (const name of parsed.searchParams.keys()) {
    if (!(OPTIONS as readonly string[]).includes(name)) {
      throw invalidUrl(url, `has an unknown option "${name}" (known: ${OPTIONS.join(', ')})`);
    }
  }
  const query = (name: (typeof OPTIONS)[number]) => parsed.searchParams.get(name) ?? undefined;
  const endpoint = query('endpoint') ?? (env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || undefined);
  if (endpoint !== undefined && !/^https?:\/\/[^/]/.test(endpoint)) {
    throw invalidUrl(url, `has an endpoint that is not an http(s) URL: ${JSON.stringify(endpoint)}`);
  }
  const region =
    query('region') ?? (env.AWS_REGION || env.AWS_DEFAULT_REGION || (endpoint !== undefined ? 'us-east-1' : undefined));
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  return {
    bucket,
    prefix: normalizePrefix(decodeURIComponent(parsed.pathname)),
    region,
    endpoint,
    forcePathStyle:
      query('path_style') !== undefined
        ? booleanOption(url, 'path_style', query('path_style'))
        : booleanOption(url, 'AWS_S3_FORCE_PATH_STYLE', env.AWS_S3_FORCE_PATH_STYLE),
    partSize: integerOption(url, 'part_size_mib', query('part_size_mib'), 5, 5, 5 * 1024) * MiB,
    queueSize: integerOption(url, 'queue_size', query('queue_size'), 1, 1, 64),
    bufferBytes: integerOption(url, 'buffer_mib', query('buffer_mib'), 16, 5, 64 * 1024) * MiB,
    credentials:
      accessKeyId && secretAccessKey
        ? { accessKeyId, secretAccessKey, ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}) }
        : undefined,
  };
}

/** Time limits and retries: a backend that is down or frozen answers within seconds, never hangs. */
export const S3_CLIENT_DEFAULTS = {
  /** TCP connect. */
  connectionTimeoutMs: 3000,
  /** A socket that moves no byte for this long fails the attempt. */
  socketTimeoutMs: 15_000,
  /** Attempts per request (the first one included), with the SDK's backoff between them. */
  maxAttempts: 3,
} as const;

/** The S3 client the settings describe. */
export function createS3Client(settings: S3StoreSettings): S3Client {
  const config: S3ClientConfig = {
    forcePathStyle: settings.forcePathStyle,
    followRegionRedirects: true,
    maxAttempts: S3_CLIENT_DEFAULTS.maxAttempts,
    requestHandler: {
      connectionTimeout: S3_CLIENT_DEFAULTS.connectionTimeoutMs,
      socketTimeout: S3_CLIENT_DEFAULTS.socketTimeoutMs,
    },
  };
  if (settings.region !== undefined) config.region = settings.region;
  if (settings.endpoint !== undefined) config.endpoint = settings.endpoint;
  if (settings.credentials !== undefined) config.credentials = settings.credentials;
  return new S3Client(config);
}

/**
 * Opens the store for `TRELLIS_ARTIFACTS_URL=s3://bucket/prefix`. It does not contact S3: a
 * bucket that cannot be reached shows in `check()` (`/readyz`) and as `503`s, not as a server that
 * will not start.
 */
export async function openS3ArtifactStore(url: string, options: { env?: Env } = {}): Promise<S3ArtifactStore> {
  const settings = parseS3Url(url, options.env ?? process.env);
  let client = createS3Client(settings);
  if (settings.region === undefined) {
    try {
      await client.config.region();
    } catch {
      // Nothing configures a region: us-east-1, and S3's redirect names the bucket's own.
      client.destroy();
      client = createS3Client({ ...settings, region: 'us-east-1' });
    }
  }
  return new S3ArtifactStore({
    client,
    bucket: settings.bucket,
    prefix: settings.prefix,
    partSize: settings.partSize,
    queueSize: settings.queueSize,
    bufferBytes: settings.bufferBytes,
  });
}

function booleanOption(url: string, name: string, raw: string | undefined): boolean {
  if (raw === undefined || raw === '') return false;
  const value = raw.toLowerCase();
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw invalidUrl(url, `has ${name}=${JSON.stringify(raw)}; expected true or false`);
}

function integerOption(url: string, name: string, raw: string | undefined, fallback: number, min: number, max: number) {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw invalidUrl(url, `has ${name}=${JSON.stringify(raw)}; expected an integer from ${min} to ${max}`);
  }
  return value;
}

function invalidUrl(url: string, reason: string): ValidationError {
  return new ValidationError(
    `artifact store URL ${JSON.stringify(url)} ${reason}`,
    [{ path: 'url', message: reason }],
    'invalid_artifacts_url',
  );
}
