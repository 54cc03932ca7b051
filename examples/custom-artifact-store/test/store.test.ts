import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TrellisClient } from '@trellis/client';
import { describeArtifactStoreConformance } from '@trellis/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: the example is plain JavaScript, as a team's adapter could be.
import { startExample } from '../server.mjs';
// @ts-expect-error: the example is plain JavaScript, as a team's adapter could be.
import { MapArtifactStore } from '../store.mjs';

// The store keeps the port's contract: the same suite the fs, S3 and GCS adapters pass.
describeArtifactStoreConformance('examples/custom-artifact-store', async () => {
  const store = new MapArtifactStore();
  return { store, close: () => store.close() };
});

describe('examples/custom-artifact-store: a control plane using it', () => {
  const BOOTSTRAP = 'custom-store-bootstrap-token-0123456789';
  let example: { trellis: { close(): Promise<void> }; url: string; artifactStore: MapArtifactStore };
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'trellis-custom-store-'));
    example = await startExample({
      env: {
        PORT: '0',
        TRELLIS_DATA_DIR: dataDir,
        // Never opened: the registered store replaces it.
        TRELLIS_ARTIFACTS_URL: 'file:///nonexistent/trellis-artifacts',
        TRELLIS_BOOTSTRAP_TOKEN: BOOTSTRAP,
        TRELLIS_LOG_LEVEL: 'silent',
      },
    });
  });
  afterAll(async () => {
    await example?.trellis.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps the plan an agent uploads in the custom store, and closes it on shutdown', async () => {
    const signIn = await fetch(`${example.url}/auth/bootstrap?token=${BOOTSTRAP}`, { redirect: 'manual' });
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const user = new TrellisClient({
      baseUrl: example.url,
      auth: { kind: 'cookie', cookie, origin: new URL(example.url).origin },
    });
    const vineyard = await user.createVineyard('custom-store');
    const configuration = await user.createConfiguration({
      name: 'inline',
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': 'output "x" { value = 1 }\n' } },
    });
    const plan = await user.createJob({ job_type: 'PLAN', configuration_id: configuration.id });
    const { worker_id, worker_token } = await user.registerAgent({ name: 'planner' });
    const agent = new TrellisClient({
      baseUrl: example.url,
      auth: { kind: 'worker', workerId: worker_id, workerToken: worker_token },
    });
    await agent.claimJob();
    const content = Buffer.from('a plan in the example store\n');
    await agent.uploadPlanArtifact(plan.id, content, content.length);
    expect(example.artifactStore.keys().filter((key: string) => key.includes(plan.id))).toHaveLength(1);

    await example.trellis.close();
    expect(example.artifactStore.closed).toBe(true);
  });
});
