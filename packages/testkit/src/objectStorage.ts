/**
 * Real object storage servers for tests and benchmarks (DESIGN §8): MinIO for S3 and
 * fake-gcs-server for Google Cloud Storage, built by `scripts/peers.sh` (see peers.ts), each
 * started on a free loopback port with its data in a temp dir, and a fresh bucket per test.
 *
 *   const minioBinary = requirePeer('minio', 'artifacts-s3 on MinIO');
 *   describe.skipIf(!minioBinary)('...', () => {
 *     let minio: MinioServer;
 *     beforeAll(async () => { minio = await startMinio(minioBinary!); });
 *     afterAll(() => minio?.stop());
 *     it('...', async () => { const bucket = await minio.createBucket(); ... });
 *   });
 *
 * The helpers speak the wire protocols themselves (a few signed S3 requests, the GCS JSON API), so
 * neither vendor SDK is a dependency of testkit. This module does not import vitest, so the
 * benchmarks can use it too.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** What a started server has in common. */
export interface ObjectStorageServer {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  readonly port: number;
  /** Creates a bucket with a fresh name and returns the name. */
  createBucket(): Promise<string>;
  /** Names of every object in the bucket (staging objects included). */
  listObjects(bucket: string): Promise<string[]>;
  /** `TRELLIS_ARTIFACTS_URL` and the environment a control plane needs to use the bucket. */
  artifactsEnv(bucket: string, prefix?: string): Record<string, string>;
  /** Freezes the process (SIGSTOP): connections are accepted by the kernel but never answered. */
  pause(): void;
  resume(): void;
  /** Stops the server for good and removes its data. Idempotent. */
  stop(): Promise<void>;
}

export interface MinioServer extends ObjectStorageServer {
  readonly region: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  /** Multipart uploads started and neither completed nor aborted, as `{ key, uploadId }`. */
  listMultipartUploads(bucket: string): Promise<{ key: string; uploadId: string }[]>;
}

export type FakeGcsServer = ObjectStorageServer;

const READY_TIMEOUT_MS = 30_000;

/**
 * Starts MinIO (the binary from `requirePeer('minio')`) on a free loopback port. `env` adds to
 * MinIO's environment (e.g. `MINIO_IDENTITY_OPENID_*` to trust an OpenID provider); `drive` is
 * where it keeps its objects (a small tmpfs, for a full store), a temp dir by default.
 */
export async function startMinio(
  binary: string,
  env: Record<string, string> = {},
  options: { drive?: string } = {},
): Promise<MinioServer> {
  const dataDir = await mkdtemp(join(tmpdir(), 'trellis-minio-'));
  const port = await freePort();
  const consolePort = await freePort();
  const accessKeyId = `trellis${randomBytes(4).toString('hex')}`;
  const secretAccessKey = randomBytes(18).toString('base64url');
  const region = 'us-east-1';
  const endpoint = `http://127.0.0.1:${port}`;
  const process_ = await startProcess(
    'minio',
    binary,
    [
      'server',
      options.drive ?? join(dataDir, 'data'),
      '--quiet',
      '--address',
      `127.0.0.1:${port}`,
      '--console-address',
      `127.0.0.1:${consolePort}`,
    ],
    {
      MINIO_ROOT_USER: accessKeyId,
      MINIO_ROOT_PASSWORD: secretAccessKey,
      MINIO_BROWSER: 'off',
      MINIO_UPDATE: 'off',
      MINIO_CI_CD: '1',
      ...env,
    },
    `${endpoint}/minio/health/ready`,
    dataDir,
  );
  const credentials = { accessKeyId, secretAccessKey, region };
  const s3 = (method: string, path: string, query?: Record<string, string>) =>
    signedS3Request(endpoint, credentials, method, path, query);

  return {
    endpoint,
    port,
    region,
    accessKeyId,
    secretAccessKey,
    async createBucket() {
      const bucket = freshBucketName();
      // MinIO answers its health checks a moment before it serves requests.
      const deadline = Date.now() + READY_TIMEOUT_MS;
      for (;;) {
        const response = await s3('PUT', `/${bucket}`);
        if (response.ok) return bucket;
        const text = await response.text();
        if (!text.includes('XMinioServerNotInitialized') || Date.now() > deadline) {
          throw new Error(`MinIO refused to create bucket ${bucket}: ${text}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    async listObjects(bucket) {
      const response = await s3('GET', `/${bucket}`, { 'list-type': '2', 'max-keys': '1000' });
      const xml = await response.text();
      if (!response.ok) throw new Error(`MinIO refused to list ${bucket}: ${xml}`);
      return xmlValues(xml, 'Key');
    },
    async listMultipartUploads(bucket) {
      const response = await s3('GET', `/${bucket}`, { uploads: '' });
      const xml = await response.text();
      if (!response.ok) throw new Error(`MinIO refused to list the uploads of ${bucket}: ${xml}`);
      return [...xml.matchAll(/<Upload>([\s\S]*?)<\/Upload>/g)].map((match) => ({
        key: xmlValues(match[1] ?? '', 'Key')[0] ?? '',
        uploadId: xmlValues(match[1] ?? '', 'UploadId')[0] ?? '',
      }));
    },
    artifactsEnv(bucket, prefix = 'trellis') {
      return {
        TRELLIS_ARTIFACTS_URL: `s3://${bucket}/${prefix}`,
        AWS_ENDPOINT_URL_S3: endpoint,
        AWS_S3_FORCE_PATH_STYLE: 'true',
        AWS_REGION: region,
        AWS_ACCESS_KEY_ID: accessKeyId,
        AWS_SECRET_ACCESS_KEY: secretAccessKey,
      };
    },
    pause: () => process_.signal('SIGSTOP'),
    resume: () => process_.signal('SIGCONT'),
    stop: () => process_.stop(),
  };
}

/** Starts fake-gcs-server (the binary from `requirePeer('fake-gcs-server')`) on a free loopback port. */
export async function startFakeGcs(binary: string): Promise<FakeGcsServer> {
  const dataDir = await mkdtemp(join(tmpdir(), 'trellis-fake-gcs-'));
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const process_ = await startProcess(
    'fake-gcs-server',
    binary,
    [
      '-scheme',
      'http',
      '-host',
      '127.0.0.1',
      '-port',
      String(port),
      '-backend',
      'memory',
      '-external-url',
      endpoint,
      '-public-host',
      `127.0.0.1:${port}`,
      '-log-level',
      'error',
    ],
    {},
    `${endpoint}/_internal/healthcheck`,
    dataDir,
  );
  return {
    endpoint,
    port,
    async createBucket() {
      const bucket = freshBucketName();
      const response = await fetch(`${endpoint}/storage/v1/b?project=trellis-test`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: bucket }),
      });
      if (!response.ok) throw new Error(`fake-gcs-server refused to create bucket ${bucket}: ${await response.text()}`);
      return bucket;
    },
    async listObjects(bucket) {
      const response = await fetch(`${endpoint}/storage/v1/b/${encodeURIComponent(bucket)}/o`);
      if (!response.ok) throw new Error(`fake-gcs-server refused to list ${bucket}: ${await response.text()}`);
      const body = (await response.json()) as { items?: { name: string }[] };
      return (body.items ?? []).map((item) => item.name);
    },
    artifactsEnv(bucket, prefix = 'trellis') {
      return {
        TRELLIS_ARTIFACTS_URL: `gs://${bucket}/${prefix}`,
        STORAGE_EMULATOR_HOST: endpoint,
        GOOGLE_CLOUD_PROJECT: 'trellis-test',
      };
    },
    pause: () => process_.signal('SIGSTOP'),
    resume: () => process_.signal('SIGCONT'),
    stop: () => process_.stop(),
  };
}

/** A loopback port nothing listens on at the moment (for "the backend is down" tests too). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not pick a free port'));
      });
    });
  });
}

/** Lowercase, 3-63 characters, unique per call: valid for S3 and GCS. */
function freshBucketName(): string {
  return `trellis-test-${Date.now().toString(36)}-${randomBytes(5).toString('hex')}`;
}

interface RunningProcess {
  signal(signal: NodeJS.Signals): void;
  stop(): Promise<void>;
}

/** Spawns a server, waits until `readyUrl` answers 200, and keeps its output for error messages. */
async function startProcess(
  name: string,
  binary: string,
  args: string[],
  env: Record<string, string>,
  readyUrl: string,
  dataDir: string,
): Promise<RunningProcess> {
  const child: ChildProcess = spawn(binary, args, {
    env: { PATH: process.env.PATH ?? '', HOME: dataDir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stopped = false;
  let paused = false;

  const stop = async () => {
    if (stopped) return;
    stopped = true;
    if (child.exitCode === null && child.signalCode === null) {
      if (paused) child.kill('SIGCONT');
      child.kill('SIGTERM');
      const force = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(force);
    }
    await rm(dataDir, { recursive: true, force: true });
  };

  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await stop();
      throw new Error(`${name} exited during start-up (${child.exitCode ?? child.signalCode}):\n${output}`);
    }
    try {
      const response = await fetch(readyUrl, { signal: AbortSignal.timeout(1000) });
      if (response.ok) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`${name} did not become ready within ${READY_TIMEOUT_MS / 1000}s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  return {
    signal(signal) {
      if (stopped) return;
      paused = signal === 'SIGSTOP' ? true : signal === 'SIGCONT' ? false : paused;
      child.kill(signal);
      if (signal === 'SIGSTOP' && child.pid !== undefined) awaitStopped(child.pid);
    },
    stop,
  };
}

/**
 * Returns once every thread of `pid` is stopped (`T` in /proc). A stop signal takes effect when
 * each thread next enters the kernel: on a busy machine a thread already running can still answer
 * a request after `kill` returned, which a "frozen server" test must not see. Bounded (5 s).
 */
function awaitStopped(pid: number): void {
  const deadline = Date.now() + 5000;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  while (Date.now() < deadline) {
    let threads: string[];
    try {
      threads = readdirSync(`/proc/${pid}/task`);
    } catch {
      return; // no /proc (not Linux), or the process is gone
    }
    const running = threads.some((tid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'T';
      } catch {
        return false; // the thread ended
      }
    });
    if (!running) return;
    Atomics.wait(pause, 0, 0, 5);
  }
}

function xmlValues(xml: string, tag: string): string[] {
  return [...xml.matchAll(new RegExp(`<${tag}>([^<]*)</${tag}>`, 'g'))].map((match) => decodeXml(match[1] ?? ''));
}

function decodeXml(text: string): string {
  return text
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&quot;', '"')
    .replaceAll('&apos;', "'")
    .replaceAll('&amp;', '&');
}

/** RFC 3986 unreserved characters stay; everything else is percent-encoded (SigV4's rule). */
function encodeRfc3986(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** One AWS Signature Version 4 request with an empty body, enough for bucket administration. */
async function signedS3Request(
  endpoint: string,
  credentials: { accessKeyId: string; secretAccessKey: string; region: string },
  method: string,
  path: string,
  query: Record<string, string> = {},
): Promise<Response> {
  const url = new URL(endpoint);
  const now = new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  const date = now.slice(0, 8);
  const payloadHash = createHash('sha256').update('').digest('hex');
  const canonicalQuery = Object.keys(query)
    .sort()
    .map((key) => `${encodeRfc3986(key)}=${encodeRfc3986(query[key] ?? '')}`)
    .join('&');
  const headers: Record<string, string> = {
    host: url.host,
    'x-amz-content-sha256': payloadHash,
    'x-amz-date': now,
  };
  const signedHeaders = Object.keys(headers).sort().join(';');
  const canonicalRequest = [
    method,
    path,
    canonicalQuery,
    ...Object.keys(headers)
      .sort()
      .map((key) => `${key}:${headers[key]}`),
    '',
    signedHeaders,
    payloadHash,
  ].join('\n');
  const scope = `${date}/${credentials.region}/s3/aws4_request`;
  const stringToSign = [
    'AWS4-HMAC-SHA256',
    now,
    scope,
    createHash('sha256').update(canonicalRequest).digest('hex'),
  ].join('\n');
  const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();
  let key = hmac(`AWS4${credentials.secretAccessKey}`, date);
  for (const part of [credentials.region, 's3', 'aws4_request']) key = hmac(key, part);
  const signature = createHmac('sha256', key).update(stringToSign).digest('hex');
  const { host: _host, ...sent } = headers;
  return fetch(`${endpoint}${path}${canonicalQuery ? `?${canonicalQuery}` : ''}`, {
    method,
    headers: {
      ...sent,
      authorization: `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`,
    },
    signal: AbortSignal.timeout(10_000),
  });
}
