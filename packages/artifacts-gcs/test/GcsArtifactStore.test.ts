import { createServer, request as httpRequest, type Server } from 'node:http';
import { createServer as createTcpServer, type Socket } from 'node:net';
import {
  GcsArtifactStore,
  createStorage,
  openGcsArtifactStore,
  parseGcsUrl,
  STAGING_SEGMENT,
} from '@trellis/artifacts-gcs';
import { NotFoundError, TooLargeError, UnavailableError, ValidationError } from '@trellis/core';
import { type FakeGcsServer, freePort, requirePeer, startFakeGcs } from '@trellis/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const MiB = 1024 * 1024;

describe('parseGcsUrl', () => {
  it('reads bucket and prefix, with the options of the URL winning over the Google environment', () => {
    const env = {
      STORAGE_EMULATOR_HOST: 'localhost:4443',
      GOOGLE_CLOUD_PROJECT: 'env-project',
      GOOGLE_APPLICATION_CREDENTIALS: '/etc/trellis/sa.json',
    };
    expect(parseGcsUrl('gs://my_bucket.example/team/trellis/', env)).toEqual({
      bucket: 'my_bucket.example',
      prefix: 'team/trellis',
      endpoint: 'http://localhost:4443',
      projectId: 'env-project',
      keyFilename: '/etc/trellis/sa.json',
    });
    expect(
      parseGcsUrl('gs://bucket?endpoint=https%3A%2F%2Fgcs.internal%3A8443%2Fstorage%2Fv1&project=p', env),
    ).toMatchObject({
      prefix: '',
      endpoint: 'https://gcs.internal:8443',
      projectId: 'p',
    });
    expect(parseGcsUrl('gs://bucket/p', {})).toMatchObject({
      endpoint: undefined,
      projectId: undefined,
      keyFilename: undefined,
    });
  });

  it.each([
    ['s3://bucket/p', 'not "gs:"'],
    ['gs://user:pass@bucket/p', 'must not hold credentials'],
    ['gs://Bucket/p', 'bucket name'],
    ['gs://bucket/a//b', 'empty segment'],
    ['gs://bucket/p?endpoint=ftp%3A%2F%2Fhost', 'endpoint'],
    ['gs://bucket/p?emulator=1', 'unknown option "emulator"'],
  ])('refuses %s', (url, message) => {
    let error: unknown;
    try {
      parseGcsUrl(url, {});
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({ code: 'invalid_artifacts_url' });
    expect((error as Error).message).toContain(message);
  });
});

const fakeGcsBinary = requirePeer('fake-gcs-server', 'GCS artifact store on fake-gcs-server');

describe.skipIf(!fakeGcsBinary)('GCS artifact store on fake-gcs-server', () => {
  let gcs: FakeGcsServer;

  beforeAll(async () => {
    gcs = await startFakeGcs(fakeGcsBinary as string);
  });
  afterAll(async () => {
    await gcs?.stop();
  });

  function open(bucket: string, endpoint = gcs.endpoint, options: { idleTimeoutMs?: number } = {}): GcsArtifactStore {
    const settings = parseGcsUrl(`gs://${bucket}/trellis?endpoint=${encodeURIComponent(endpoint)}`, {});
    return new GcsArtifactStore({
      storage: createStorage(settings),
      bucket: settings.bucket,
      prefix: settings.prefix,
      authenticated: false,
      ...options,
    });
  }

  async function objectMetadata(bucket: string, name: string) {
    const response = await fetch(`${gcs.endpoint}/storage/v1/b/${bucket}/o/${encodeURIComponent(name)}`);
    return (await response.json()) as { size: string; metadata?: Record<string, string> };
  }

  it('writes one-request and resumable uploads straight to their keys; the digest stays with the caller', async () => {
    const bucket = await gcs.createBucket();
    const store = open(bucket);
    const small = await store.put('plans/o/j/terraform.plan.out', bytes(1000, 7), { maxBytes: 50 * MiB });
    const large = await store.put('state/o/v/1-x.tfstate', bytes(12 * MiB, 8), { maxBytes: 50 * MiB });
    for (const [name, stored] of [
      ['trellis/plans/o/j/terraform.plan.out', small],
      ['trellis/state/o/v/1-x.tfstate', large],
    ] as const) {
      const metadata = await objectMetadata(bucket, name);
      expect({ name, size: Number(metadata.size) }).toEqual({ name, size: stored.size });
    }
    expect((await gcs.listObjects(bucket)).sort()).toEqual([
      'trellis/plans/o/j/terraform.plan.out',
      'trellis/state/o/v/1-x.tfstate',
    ]);
  });

  describe('an upload that stops early leaves no object and cancels its resumable session', () => {
    it('over the limit after several MiB', async () => {
      const bucket = await gcs.createBucket();
      const proxy = await startRecordingProxy(gcs.port);
      try {
        const store = open(bucket, proxy.url);
        await store.put('plans/o/j/plan', bytes(6 * MiB, 1), { maxBytes: 50 * MiB });
        let pulled = 0;
        let closed = false;
        async function* endless() {
          try {
            for (;;) {
              pulled += 256 * 1024;
              yield Buffer.alloc(256 * 1024, 1);
            }
          } finally {
            closed = true;
          }
        }
        const error = await store.put('plans/o/j/plan', endless(), { maxBytes: 17 * MiB }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(TooLargeError);
        expect(closed).toBe(true);
        expect(pulled).toBeLessThanOrEqual(17 * MiB + 8 * MiB);
        expect(await gcs.listObjects(bucket)).toEqual(['trellis/plans/o/j/plan']);
        expect((await objectMetadata(bucket, 'trellis/plans/o/j/plan')).size).toBe(String(6 * MiB));
        const sessions = proxy.requests.filter((r) => r.method === 'POST' && r.url.includes('uploadType=resumable'));
        const cancels = proxy.requests.filter((r) => r.method === 'DELETE' && r.url.includes('upload_id='));
        expect(sessions).toHaveLength(2);
        expect(cancels, 'the session of the refused upload is cancelled').toHaveLength(1);
        // The 6 MiB upload before went straight to its key: no server-side copy (rewrite) was made.
        expect(proxy.requests.filter((r) => /\/(rewriteTo|copyTo)\//.test(r.url))).toEqual([]);
      } finally {
        await proxy.close();
      }
    });

    it('a body that fails after several MiB, whose error is passed on', async () => {
      const bucket = await gcs.createBucket();
      const proxy = await startRecordingProxy(gcs.port);
      try {
        const store = open(bucket, proxy.url);
        async function* failing() {
          yield* bytes(12 * MiB, 3);
          throw new Error('the agent went away');
        }
        await expect(store.put('plans/o/j/plan', failing(), { maxBytes: 50 * MiB })).rejects.toThrow(
          'the agent went away',
        );
        expect(await gcs.listObjects(bucket)).toEqual([]);
        expect(proxy.requests.filter((r) => r.method === 'DELETE' && r.url.includes('upload_id='))).toHaveLength(1);
      } finally {
        await proxy.close();
      }
    });
  });

  it('a missing object is NotFoundError, a missing bucket is UnavailableError', async () => {
    const store = open(await gcs.createBucket());
    await expect(store.get('plans/none')).rejects.toBeInstanceOf(NotFoundError);
    const nowhere = open('trellis-no-such-bucket');
    await expect(nowhere.get('plans/none')).rejects.toMatchObject({ code: 'artifact_store_unavailable' });
  });

  it('refuses a key in the staging area and keys that are not relative paths', async () => {
    const store = open(await gcs.createBucket());
    for (const key of [`${STAGING_SEGMENT}/x`, '../x', 'a//b', '/a', 'a/./b', '']) {
      await expect(store.put(key, bytes(1, 1), { maxBytes: 10 }), key).rejects.toBeInstanceOf(ValidationError);
    }
  });

  describe('a backend that cannot serve answers UnavailableError within seconds', () => {
    async function expectUnavailable(promise: Promise<unknown>, reason: string, withinMs: number) {
      const started = Date.now();
      const error = await promise.then(
        () => undefined,
        (e: unknown) => e,
      );
      const took = Date.now() - started;
      expect(error).toBeInstanceOf(UnavailableError);
      expect(error).toMatchObject({ code: 'artifact_store_unavailable' });
      expect((error as Error).message).toContain(reason);
      expect(took, `answered after ${took} ms`).toBeLessThan(withinMs);
    }

    it('nothing listening on the port: check, put (small and resumable), get and delete', async () => {
      const store = open('trellis-nowhere', `http://127.0.0.1:${await freePort()}`);
      await expectUnavailable(store.check(), 'cannot connect (ECONNREFUSED)', 5000);
      await expectUnavailable(store.put('a/b', bytes(100, 1), { maxBytes: MiB }), 'ECONNREFUSED', 5000);
      await expectUnavailable(store.put('a/b', bytes(8 * MiB, 1), { maxBytes: 50 * MiB }), 'ECONNREFUSED', 5000);
      await expectUnavailable(store.get('a/b'), 'ECONNREFUSED', 5000);
      await expectUnavailable(store.delete('a/b'), 'ECONNREFUSED', 5000);
    });

    it('a server that accepts connections and never answers: check() times out', async () => {
      const silent = await startSilentServer();
      try {
        await expectUnavailable(open('trellis-silent', silent.url).check(), 'timed out', 7000);
      } finally {
        await silent.close();
      }
    });

    it('fake-gcs-server frozen (SIGSTOP): check() and a resumable upload time out; it works again once resumed', async () => {
      const bucket = await gcs.createBucket();
      const store = open(bucket, gcs.endpoint, { idleTimeoutMs: 2000 });
      await store.check();
      gcs.pause();
      try {
        await expectUnavailable(store.check(), 'timed out', 7000);
        await expectUnavailable(store.put('a/b', bytes(8 * MiB, 1), { maxBytes: 50 * MiB }), 'no progress', 10_000);
      } finally {
        gcs.resume();
      }
      await expect(store.check()).resolves.toBeUndefined();
    });

    it('a server that refuses the credentials (401): check, put and get', async () => {
      const refusing = await startRefusingServer();
      try {
        const store = open('trellis-refused', refusing.url);
        await expectUnavailable(store.check(), 'the credentials were refused (401)', 5000);
        await expectUnavailable(store.put('a/b', bytes(100, 1), { maxBytes: MiB }), 'credentials were refused', 5000);
        await expectUnavailable(store.put('a/c', bytes(8 * MiB, 1), { maxBytes: 50 * MiB }), 'credentials', 5000);
        await expectUnavailable(store.get('a/b'), 'credentials were refused', 5000);
      } finally {
        await refusing.close();
      }
    });

    it('a bucket that does not exist: check() says so', async () => {
      const store = open('trellis-no-such-bucket');
      await expectUnavailable(store.check(), 'the bucket does not exist', 5000);
    });
  });

  it('opens from STORAGE_EMULATOR_HOST, given to it or in the process environment', async () => {
    const bucket = await gcs.createBucket();
    const given = await openGcsArtifactStore(`gs://${bucket}/p`, { env: { STORAGE_EMULATOR_HOST: gcs.endpoint } });
    await given.put('a/b', bytes(10, 1), { maxBytes: MiB });
    // As an operator sets it: the library would read it on its own and miss the API's path.
    const saved = process.env.STORAGE_EMULATOR_HOST;
    process.env.STORAGE_EMULATOR_HOST = gcs.endpoint.replace('http://', '');
    try {
      const fromProcess = await openGcsArtifactStore(`gs://${bucket}/p`);
      await fromProcess.put('a/c', bytes(10, 2), { maxBytes: MiB });
      const got = await fromProcess.get('a/b');
      expect(Buffer.concat(await got.body.toArray())).toHaveLength(10);
    } finally {
      if (saved === undefined) delete process.env.STORAGE_EMULATOR_HOST;
      else process.env.STORAGE_EMULATOR_HOST = saved;
    }
    expect((await gcs.listObjects(bucket)).sort()).toEqual(['p/a/b', 'p/a/c']);
  });
});

async function* bytes(size: number, seed: number): AsyncGenerator<Uint8Array> {
  const chunk = 256 * 1024;
  for (let sent = 0; sent < size; sent += chunk) yield Buffer.alloc(Math.min(chunk, size - sent), seed + sent / chunk);
}

async function listen(server: Server | ReturnType<typeof createTcpServer>): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

/** Forwards every request to fake-gcs-server on loopback and records its method and URL. */
async function startRecordingProxy(targetPort: number) {
  const requests: { method: string; url: string }[] = [];
  const server = createServer((req, res) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '' });
    const upstream = httpRequest(
      { host: '127.0.0.1', port: targetPort, method: req.method, path: req.url, headers: req.headers },
      (response) => {
        res.writeHead(response.statusCode ?? 502, response.headers);
        response.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.on('aborted', () => upstream.destroy());
    req.pipe(upstream);
  });
  const url = await listen(server);
  return {
    url,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Answers every request 401 as GCS does for a bad token. */
async function startRefusingServer() {
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({ error: { code: 401, message: 'Invalid Credentials', errors: [{ reason: 'authError' }] } }),
    );
  });
  const url = await listen(server);
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Accepts TCP connections and never writes a byte: a frozen or overloaded backend. */
async function startSilentServer() {
  const sockets = new Set<Socket>();
  const server = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.resume();
  });
  const url = await listen(server);
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
