import { IdempotencyStrategy, Storage, type StorageOptions } from '@google-cloud/storage';
import { ValidationError } from '@trellis/core';
import { GcsArtifactStore } from './GcsArtifactStore.js';
import { normalizePrefix } from '@trellis/core';

type Env = Record<string, string | undefined>;

/** Everything `TRELLIS_ARTIFACTS_URL=gs://…` and the Google environment say about the store. */
export interface GcsStoreSettings {
  bucket: string;
  prefix: string;
  /** An emulator or private endpoint (origin only); undefined for Google Cloud Storage itself. */
  endpoint: string | undefined;
  projectId: string | undefined;
  /** A service account key file; undefined for Application Default Credentials. */
  keyFilename: string | undefined;
}

const OPTIONS = ['endpoint', 'project'] as const;

/**
 * `gs://bucket/prefix?endpoint=http://127.0.0.1:4443&project=…`. Options in the URL win over the
 * standard Google environment: `STORAGE_EMULATOR_HOST` (the emulator, e.g. fake-gcs-server),
 * `GOOGLE_CLOUD_PROJECT` (or `GCLOUD_PROJECT`) and `GOOGLE_APPLICATION_CREDENTIALS`; without a key
 * file, Application Default Credentials apply (the metadata server on GCE, GKE and Cloud Run;
 * `gcloud auth application-default login` on a workstation).
 */
export function parseGcsUrl(url: string, env: Env = process.env): GcsStoreSettings {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalidUrl(url, 'is not a URL (expected gs://bucket/prefix)');
  }
  if (parsed.protocol !== 'gs:') throw invalidUrl(url, `has scheme "${parsed.protocol}", not "gs:"`);
  if (parsed.username || parsed.password) {
    throw invalidUrl(url, 'must not hold credentials; use GOOGLE_APPLICATION_CREDENTIALS or a service account');
  }
  const bucket = parsed.hostname;
  if (!/^[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]$/.test(bucket)) {
    throw invalidUrl(
      url,
      'needs a bucket name of lowercase letters, digits, dots, hyphens and underscores (gs://bucket/prefix)',
    );
  }
  for (const name of parsed.searchParams.keys()) {
    if (!(OPTIONS as readonly string[]).includes(name)) {
      throw invalidUrl(url, `has an unknown option "${name}" (known: ${OPTIONS.join(', ')})`);
    }
  }
  const rawEndpoint = parsed.searchParams.get('endpoint') ?? (env.STORAGE_EMULATOR_HOST || undefined);
  let endpoint: string | undefined;
  if (rawEndpoint !== undefined) {
    // STORAGE_EMULATOR_HOST is often given without a scheme (`localhost:4443`) or with the API path.
    const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(rawEndpoint) ? rawEndpoint : `http://${rawEndpoint}`;
    try {
      const parsedEndpoint = new URL(withScheme);
      if (parsedEndpoint.protocol !== 'http:' && parsedEndpoint.protocol !== 'https:') throw new Error('not http');
      endpoint = parsedEndpoint.origin;
    } catch {
      throw invalidUrl(url, `has an endpoint that is not an http(s) URL: ${JSON.stringify(rawEndpoint)}`);
    }
  }
  return {
    bucket,
    prefix: normalizePrefix(decodeURIComponent(parsed.pathname)),
    endpoint,
    projectId: parsed.searchParams.get('project') ?? (env.GOOGLE_CLOUD_PROJECT || env.GCLOUD_PROJECT || undefined),
    keyFilename: env.GOOGLE_APPLICATION_CREDENTIALS || undefined,
  };
}

/** Time limits and retries: a backend that is down or frozen answers within seconds, never hangs. */
export const GCS_CLIENT_DEFAULTS = {
  /** Per JSON API request (metadata, listing, copy, delete, one-request uploads). */
  requestTimeoutMs: 30_000,
  /** Retries after the first attempt, for 408, 429, 5xx and dropped connections. */
  maxRetries: 2,
  /** Seconds: the longest pause between two attempts, and the most all retries may take. */
  maxRetryDelayS: 1,
  totalRetryTimeoutS: 20,
} as const;

/** The Storage client the settings describe. */
export function createStorage(settings: GcsStoreSettings): Storage {
  const options: StorageOptions = {
    timeout: GCS_CLIENT_DEFAULTS.requestTimeoutMs,
    retryOptions: {
      autoRetry: true,
      maxRetries: GCS_CLIENT_DEFAULTS.maxRetries,
      retryDelayMultiplier: 2,
      maxRetryDelay: GCS_CLIENT_DEFAULTS.maxRetryDelayS,
      totalTimeout: GCS_CLIENT_DEFAULTS.totalRetryTimeoutS,
      // Every request of this store may be repeated safely (a copy or upload of the same bytes,
      // a delete that ignores a missing object); the default would also switch retries off and
      // on again for the whole client around each copy, racing concurrent requests.
      idempotencyStrategy: IdempotencyStrategy.RetryAlways,
    },
  };
  if (settings.endpoint !== undefined) options.apiEndpoint = settings.endpoint;
  if (settings.projectId !== undefined) options.projectId = settings.projectId;
  if (settings.keyFilename !== undefined) options.keyFilename = settings.keyFilename;
  return withoutEmulatorVariable(() => new Storage(options));
}

/**
 * The library reads STORAGE_EMULATOR_HOST from `process.env` itself and then uses the value as
 * the JSON API's base URL as it stands, without the `/storage/v1` that fake-gcs-server (and
 * every other emulator) serves the API under. The endpoint parsed from it is passed as
 * `apiEndpoint` instead, so the variable is hidden while the client is made.
 */
function withoutEmulatorVariable<T>(make: () => T): T {
  const saved = process.env.STORAGE_EMULATOR_HOST;
  if (saved === undefined) return make();
  delete process.env.STORAGE_EMULATOR_HOST;
  try {
    return make();
  } finally {
    process.env.STORAGE_EMULATOR_HOST = saved;
  }
}

/**
 * Opens the store for `TRELLIS_ARTIFACTS_URL=gs://bucket/prefix`. It does not contact GCS: a
 * bucket that cannot be reached shows in `check()` (`/readyz`) and as `503`s.
 */
export async function openGcsArtifactStore(url: string, options: { env?: Env } = {}): Promise<GcsArtifactStore> {
  const settings = parseGcsUrl(url, options.env ?? process.env);
  return new GcsArtifactStore({
    storage: createStorage(settings),
    bucket: settings.bucket,
    prefix: settings.prefix,
    // The library sends no credentials to an endpoint other than Google's own.
    authenticated: settings.endpoint === undefined,
  });
}

function invalidUrl(url: string, reason: string): ValidationError {
  return new ValidationError(
    `artifact store URL ${JSON.stringify(url)} ${reason}`,
    [{ path: 'url', message: reason }],
    'invalid_artifacts_url',
  );
}
