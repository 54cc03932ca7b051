/**
 * The control plane with TRELLIS_ARTIFACTS_URL on object storage (DESIGN §5): the plan-artifact
 * assertions of agents.test.ts and a state version, over real HTTP, with the server on S3 (MinIO)
 * and on GCS (fake-gcs-server), each configured from the environment as an operator would.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { TrellisApiError, type TrellisClient } from '@trellis/client';
import {
  type FakeGcsServer,
  type MinioServer,
  type ObjectStorageServer,
  type PeerName,
  requirePeer,
  startFakeGcs,
  startMinio,
} from '@trellis/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningControlPlane, startControlPlane, vineyardWithConfiguration } from './support/controlPlane.js';

const MiB = 1024 * 1024;
/** Longer than any timeout of the server's own (the store's 5 s readiness listing, its request timeouts): an answer later than this is a hang. */
const HANG = 60_000;

interface Backend {
  name: string;
  peer: PeerName;
  start(binary: string): Promise<ObjectStorageServer>;
  /** Multipart uploads neither completed nor aborted (S3 only; a GCS session holds no object). */
  pendingUploads(storage: ObjectStorageServer, bucket: string): Promise<unknown[]>;
}

const BACKENDS: Backend[] = [
  {
    name: 'S3 (MinIO)',
    peer: 'minio',
    start: startMinio,
    pendingUploads: (storage, bucket) => (storage as MinioServer).listMultipartUploads(bucket),
  },
  {
    name: 'GCS (fake-gcs-server)',
    peer: 'fake-gcs-server',
    start: (binary) => startFakeGcs(binary) as Promise<FakeGcsServer>,
    pendingUploads: async () => [],
  },
];

async function apiError(promise: Promise<unknown>): Promise<TrellisApiError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof TrellisApiError) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
}

/** A stream of `size` deterministic bytes, produced lazily (no declared length). */
function bytes(size: number, seed = 1): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= size) return controller.close();
      const chunk = Buffer.alloc(Math.min(256 * 1024, size - sent), (sent / 1024 + seed) % 251);
      sent += chunk.length;
      controller.enqueue(chunk);
    },
  });
}

function bytesOf(size: number, seed: number): Buffer {
  const out = Buffer.alloc(size);
  for (let at = 0; at < size; at += 256 * 1024) out.fill((at / 1024 + seed) % 251, at, Math.min(at + 256 * 1024, size));
  return out;
}

for (const backend of BACKENDS) {
  const binary = requirePeer(backend.peer, `control plane with artifacts on ${backend.name}`);

  describe.skipIf(!binary)(`the control plane with artifacts on ${backend.name}`, () => {
    let storage: ObjectStorageServer;
    let bucket: string;
    let server: RunningControlPlane;
    let users = 0;

    beforeAll(async () => {
      storage = await backend.start(binary as string);
      bucket = await storage.createBucket();
      server = await startControlPlane('sqlite', { env: storage.artifactsEnv(bucket, 'trellis') });
    });
    afterAll(async () => {
      await server?.close();
      await storage?.stop();
    });

    async function runningPlan(name: string) {
      users += 1;
      const user: TrellisClient = await server.userClient(`${name}${users}@example.com`);
      const { configuration } = await vineyardWithConfiguration(user, name);
      const plan = await user.createJob({ job_type: 'PLAN', configuration_id: configuration.id });
      const agent = await server.agentClient(user, 'planner');
      const applier = await server.agentClient(user, 'applier');
      await agent.claimJob();
      return { user, configuration, plan, agent, applier };
    }

    it('streams plan artifacts in and out, refusing 50 MiB + 1 while streaming and keeping the earlier one', async () => {
      const { plan, agent, applier } = await runningPlan('artifacts');
      // Larger than a part, so it takes the multipart (S3) or resumable (GCS) path.
      const content = bytesOf(7 * MiB + 123, 5);
      const stored = await agent.uploadPlanArtifact(plan.id, content, content.length);
      expect(stored).toEqual({
        job_id: plan.id,
        size: content.length,
        sha256: createHash('sha256').update(content).digest('hex'),
      });

      const tooLarge = await apiError(agent.uploadPlanArtifact(plan.id, bytes(50 * MiB + 1)));
      expect([tooLarge.status, tooLarge.code]).toEqual([413, 'artifact_too_large']);

      const download = await applier.downloadPlanArtifact(plan.id);
      expect({ size: download.size, sha256: download.sha256 }).toEqual({ size: stored.size, sha256: stored.sha256 });
      expect(Buffer.concat(await Readable.fromWeb(download.body as never).toArray()).equals(content)).toBe(true);

      // The bucket holds the plan under the prefix and nothing else: no staging object, no upload.
      const objects = await storage.listObjects(bucket);
      expect(objects.filter((name) => name.includes(plan.id))).toEqual([
        expect.stringMatching(new RegExp(`^trellis/plans/[0-9a-f-]{36}/${plan.id}/terraform\\.plan\\.out$`)),
      ]);
      expect(objects.filter((name) => name.includes('.trellis-staging'))).toEqual([]);
      expect(await backend.pendingUploads(storage, bucket)).toEqual([]);

      // A small one replaces it (one request), and is served with its length and digest as ETag.
      const small = Buffer.from('a terraform plan file\n'.repeat(1000));
      const replaced = await agent.uploadPlanArtifact(plan.id, small, small.length);
      const response = await fetch(`${server.url}/api/jobs/${plan.id}/plan-artifact`, {
        headers: { 'x-worker-id': applier.workerId, 'x-worker-token': applier.workerToken },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-length')).toBe(String(small.length));
      expect(response.headers.get('etag')).toContain(replaced.sha256);
      expect(Buffer.from(await response.arrayBuffer()).equals(small)).toBe(true);
    });

    it('keeps state versions in the bucket', async () => {
      const { configuration, agent } = await runningPlan('state');
      const url = `${server.url}/api/state/${configuration.id}`;
      const authorization = `Basic ${Buffer.from(`${agent.workerId}:${agent.workerToken}`).toString('base64')}`;
      const state = JSON.stringify({ version: 4, serial: 3, lineage: 'l', outputs: {}, resources: [] });
      expect((await fetch(url, { method: 'POST', headers: { authorization }, body: state })).status).toBe(200);
      const got = await fetch(url, { headers: { authorization } });
      expect([got.status, JSON.parse(await got.text()).serial]).toEqual([200, 3]);
      expect((await storage.listObjects(bucket)).some((name) => name.startsWith('trellis/state/'))).toBe(true);
    });

    it('answers /readyz and artifact requests with 503, not a hang, while the object store is down', async () => {
      const { plan, agent, applier } = await runningPlan('down');
      await agent.uploadPlanArtifact(plan.id, Buffer.from('plan'), 4);
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);

      // Frozen: connections open but nothing answers, so only the server's own timeouts can end the
      // wait; a hang would outlast `HANG` and fail here (no duration is asserted: the machine may be busy).
      storage.pause();
      try {
        const frozen = await fetch(`${server.url}/readyz`, { signal: AbortSignal.timeout(HANG) });
        expect([frozen.status, (await frozen.json()).code]).toEqual([503, 'not_ready']);
      } finally {
        storage.resume();
      }
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);

      // Stopped for good (the last test of the suite): refused connections, answered quickly.
      await storage.stop();
      expect((await fetch(`${server.url}/readyz`, { signal: AbortSignal.timeout(HANG) })).status).toBe(503);
      const download = await apiError(applier.downloadPlanArtifact(plan.id));
      expect([download.status, download.code]).toEqual([503, 'artifact_store_unavailable']);
      const upload = await apiError(agent.uploadPlanArtifact(plan.id, Buffer.from('plan'), 4));
      expect([upload.status, upload.code]).toEqual([503, 'artifact_store_unavailable']);
    });
  });
}
