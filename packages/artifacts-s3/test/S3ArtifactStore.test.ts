import { createHash } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { openS3ArtifactStore, parseS3Url, type S3ArtifactStore, STAGING_SEGMENT } from '@trellis/artifacts-s3';
import { TooLargeError, UnavailableError, ValidationError } from '@trellis/core';
import { freePort, type MinioServer, requirePeer, startMinio } from '@trellis/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

const MiB = 1024 * 1024;

describe('parseS3Url', () => {
  it('reads bucket and prefix, with the options of the URL winning over the AWS environment', () => {
    const env = {
      AWS_REGION: 'eu-west-1',
      AWS_ENDPOINT_URL_S3: 'https://s3.example.test',
      AWS_S3_FORCE_PATH_STYLE: 'true',
      AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'secret',
    };
    expect(parseS3Url('s3://my-bucket/team/trellis/', env)).toEqual({
      bucket: 'my-bucket',
      prefix: 'team/trellis',
      region: 'eu-west-1',
      endpoint: 'https://s3.example.test',
      forcePathStyle: true,
      partSize: 5 * MiB,
      queueSize: 1,
      bufferBytes: 16 * MiB,
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
    });
    const fromUrl = parseS3Url(
      's3://my-bucket?region=us-west-2&endpoint=http%3A%2F%2F127.0.0.1%3A9000&path_style=false&part_size_mib=8&queue_size=3&buffer_mib=40',
      env,
    );
    expect(fromUrl).toMatchObject({
      prefix: '',
      region: 'us-west-2',
      endpoint: 'http://127.0.0.1:9000',
      forcePathStyle: false,
      partSize: 8 * MiB,
      queueSize: 3,
      bufferBytes: 40 * MiB,
    });
  });

  it('leaves region and credentials to the SDK when nothing names them, and defaults path style off', () => {
    expect(parseS3Url('s3://bucket/p', {})).toMatchObject({
      region: undefined,
      endpoint: undefined,
      forcePathStyle: false,
      credentials: undefined,
    });
    // A custom endpoint without a region (MinIO, Ceph) gets us-east-1, which they all accept.
    expect(parseS3Url('s3://bucket/p', { AWS_ENDPOINT_URL: 'http://127.0.0.1:9000' }).region).toBe('us-east-1');
  });

  it.each([
    ['gs://bucket/p', 'not "s3:"'],
    ['s3://user:pass@bucket/p', 'must not hold credentials'],
    ['s3://B/p', 'bucket name'],
    ['s3://bucket/a//b', 'empty segment'],
    ['s3://bucket/p?part_size_mib=4', 'part_size_mib'],
    ['s3://bucket/p?queue_size=0', 'queue_size'],
    ['s3://bucket/p?buffer_mib=4', 'buffer_mib'],
    ['s3://bucket/p?path_style=yes', 'path_style'],
    ['s3://bucket/p?endpoint=localhost:9000', 'endpoint'],
    ['s3://bucket/p?pathstyle=true', 'unknown option "pathstyle"'],
  ])('refuses %s', (url, message) => {
    let error: unknown;
    try {
      parseS3Url(url, {});
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({ code: 'invalid_artifacts_url' });
    expect((error as Error).message).toContain(message);
  });
});

const minioBinary = requirePeer('minio', 'S3 artifact store on MinIO');

describe.skipIf(!minioBinary)('S3 artifact store on MinIO', () => {
  let minio: MinioServer;
  const opened: S3ArtifactStore[] = [];

  beforeAll(async () => {
    minio = await startMinio(minioBinary as string);
  });
  afterAll(async () => {
    await minio?.stop();
  });
  afterEach(() => {
    for (const store of opened.splice(0)) store.client.destroy();
  });

  async function open(
    bucket: string,
    options: { endpoint?: string; secret?: string; query?: string } = {},
  ): Promise<S3ArtifactStore> {
    const endpoint = encodeURIComponent(options.endpoint ?? minio.endpoint);
    const store = await openS3ArtifactStore(
      `s3://${bucket}/trellis?endpoint=${endpoint}&path_style=true&region=us-east-1${options.query ?? ''}`,
      { env: { AWS_ACCESS_KEY_ID: minio.accessKeyId, AWS_SECRET_ACCESS_KEY: options.secret ?? minio.secretAccessKey } },
    );
    opened.push(store);
    return store;
  }

  async function leftovers(bucket: string) {
    return { uploads: await minio.listMultipartUploads(bucket), objects: await minio.listObjects(bucket) };
  }

  it('writes every byte once: a multipart upload goes straight to the key, with no staging copy', async () => {
    const bucket = await minio.createBucket();
    const store = await open(bucket);
    const sent: { command: string; bytes: number }[] = [];
    store.client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { ContentLength?: number };
        sent.push({ command: context.commandName ?? '?', bytes: input.ContentLength ?? 0 });
        return next(args);
      },
      { step: 'initialize', name: 'recordCommands' },
    );
    const size = 12 * MiB;
    const stored = await store.put('state/o/v/1-x.tfstate', bytes(size, 8), { maxBytes: 50 * MiB });
    expect(stored.size).toBe(size);
    expect(sent.map((s) => s.command)).toEqual([
      'CreateMultipartUploadCommand',
      'UploadPartCommand',
      'UploadPartCommand',
      'UploadPartCommand',
      'CompleteMultipartUploadCommand',
    ]);
    expect(sent.reduce((total, s) => total + s.bytes, 0)).toBe(size);
    expect(await leftovers(bucket)).toEqual({ uploads: [], objects: ['trellis/state/o/v/1-x.tfstate'] });
  });

  it('reads an object an earlier version stored (staged copy, sha256 in metadata) byte for byte', async () => {
    const bucket = await minio.createBucket();
    const store = await open(bucket);
    const chunks: Uint8Array[] = [];
    for await (const chunk of bytes(3 * MiB, 5)) chunks.push(chunk);
    const body = Buffer.concat(chunks);
    await store.client.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: 'trellis/plans/o/j/terraform.plan.out',
        Body: body,
        Metadata: { sha256: createHash('sha256').update(body).digest('hex') },
      }),
    );
    const got = await store.get('plans/o/j/terraform.plan.out');
    expect(got.size).toBe(body.length);
    expect(Buffer.concat(await got.body.toArray()).equals(body)).toBe(true);
  });

  it('aborts the multipart upload of a body that passes the limit after several parts', async () => {
    const bucket = await minio.createBucket();
    const store = await open(bucket);
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
    expect(await leftovers(bucket)).toEqual({ uploads: [], objects: ['trellis/plans/o/j/plan'] });
    const kept = await store.get('plans/o/j/plan');
    expect(kept.size).toBe(6 * MiB);
    expect(Buffer.concat(await kept.body.toArray()).length).toBe(6 * MiB);
  });

  it('aborts the multipart upload of a body that fails after several parts, and passes its error on', async () => {
    const bucket = await minio.createBucket();
    const store = await open(bucket);
    async function* failing() {
      yield* bytes(12 * MiB, 3);
      throw new Error('the agent went away');
    }
    await expect(store.put('plans/o/j/plan', failing(), { maxBytes: 50 * MiB })).rejects.toThrow('the agent went away');
    expect(await leftovers(bucket)).toEqual({ uploads: [], objects: [] });
  });

  it('shares its part buffers: with room for one part, concurrent multipart uploads take turns and all complete', async () => {
    const bucket = await minio.createBucket();
    const oneAtATime = await open(bucket, { query: '&buffer_mib=5' });
    expect(oneAtATime.bufferCount).toBe(1);
    const pipelined = await open(bucket, { query: '&queue_size=3&buffer_mib=15' });
    const puts = [
      ...[1, 2, 3].map((i) => oneAtATime.put(`turns/${i}`, bytes(11 * MiB + i, i), { maxBytes: 50 * MiB })),
      pipelined.put('pipelined/1', bytes(16 * MiB, 9), { maxBytes: 50 * MiB }),
    ];
    const stored = await Promise.all(puts);
    for (const [i, key] of ['turns/1', 'turns/2', 'turns/3', 'pipelined/1'].entries()) {
      const got = await oneAtATime.get(key);
      const sha256 = createHash('sha256')
        .update(Buffer.concat(await got.body.toArray()))
        .digest('hex');
      expect({ key, size: got.size, sha256 }).toEqual({ key, ...stored[i] });
    }
    expect(await leftovers(bucket)).toMatchObject({ uploads: [] });
  });

  it('sends no checksum headers under AWS_REQUEST_CHECKSUM_CALCULATION=WHEN_REQUIRED (servers that refuse them)', async () => {
    const bucket = await minio.createBucket();
    const saved = process.env.AWS_REQUEST_CHECKSUM_CALCULATION;
    process.env.AWS_REQUEST_CHECKSUM_CALCULATION = 'WHEN_REQUIRED';
    try {
      const store = await open(bucket);
      for (const [key, size] of [
        ['small', 1000],
        ['large', 11 * MiB],
      ] as const) {
        const stored = await store.put(key, bytes(size, 4), { maxBytes: 50 * MiB });
        const got = await store.get(key);
        expect(
          createHash('sha256')
            .update(Buffer.concat(await got.body.toArray()))
            .digest('hex'),
        ).toBe(stored.sha256);
        const head = await store.client.send(
          new HeadObjectCommand({ Bucket: bucket, Key: `trellis/${key}`, ChecksumMode: 'ENABLED' }),
        );
        expect({ key, crc32: head.ChecksumCRC32, sha256: head.ChecksumSHA256 }).toEqual({
          key,
          crc32: undefined,
          sha256: undefined,
        });
      }
    } finally {
      if (saved === undefined) delete process.env.AWS_REQUEST_CHECKSUM_CALCULATION;
      else process.env.AWS_REQUEST_CHECKSUM_CALCULATION = saved;
    }
  });

  it('refuses a key in the staging area and keys that are not relative paths', async () => {
    const store = await open(await minio.createBucket());
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

    it('nothing listening on the port: check, put, get and delete', async () => {
      const store = await open('trellis-nowhere', { endpoint: `http://127.0.0.1:${await freePort()}` });
      await expectUnavailable(store.check(), 'cannot connect (ECONNREFUSED)', 5000);
      await expectUnavailable(store.put('a/b', bytes(100, 1), { maxBytes: MiB }), 'ECONNREFUSED', 5000);
      await expectUnavailable(store.get('a/b'), 'ECONNREFUSED', 5000);
      await expectUnavailable(store.delete('a/b'), 'ECONNREFUSED', 5000);
    });

    it('a server that accepts connections and never answers: check() times out', async () => {
      const silent = await startSilentServer();
      try {
        const store = await open('trellis-silent', { endpoint: silent.url });
        await expectUnavailable(store.check(), 'timed out', 7000);
      } finally {
        await silent.close();
      }
    });

    it('MinIO frozen mid-life (SIGSTOP): check() times out, and works again once it resumes', async () => {
      const store = await open(await minio.createBucket());
      await store.check();
      minio.pause();
      try {
        await expectUnavailable(store.check(), 'timed out', 7000);
      } finally {
        minio.resume();
      }
      await expect(store.check()).resolves.toBeUndefined();
    });

    it('wrong credentials: check, put and get (not a not-found)', async () => {
      const bucket = await minio.createBucket();
      await (await open(bucket)).put('a/b', bytes(10, 1), { maxBytes: MiB });
      const store = await open(bucket, { secret: 'not-the-secret-at-all' });
      await expectUnavailable(store.check(), 'credentials were refused (SignatureDoesNotMatch)', 5000);
      await expectUnavailable(store.put('a/b', bytes(100, 1), { maxBytes: MiB }), 'credentials were refused', 5000);
      await expectUnavailable(store.put('a/c', bytes(12 * MiB, 1), { maxBytes: 50 * MiB }), 'credentials', 5000);
      await expectUnavailable(store.get('a/b'), 'credentials were refused', 5000);
    });

    it('a bucket that does not exist: check() says so', async () => {
      const store = await open('trellis-no-such-bucket');
      await expectUnavailable(store.check(), 'the bucket does not exist', 5000);
      await expectUnavailable(store.put('a/b', bytes(100, 1), { maxBytes: MiB }), 'the bucket does not exist', 5000);
    });
  });
});

async function* bytes(size: number, seed: number): AsyncGenerator<Uint8Array> {
  const chunk = 256 * 1024;
  for (let sent = 0; sent < size; sent += chunk) yield Buffer.alloc(Math.min(chunk, size - sent), seed + sent / chunk);
}

/** Accepts TCP connections and never writes a byte: a frozen or overloaded backend. */
async function startSilentServer(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
