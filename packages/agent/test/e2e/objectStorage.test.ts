import { type ObjectStorageServer, type PeerName, requirePeer, startFakeGcs, startMinio } from '@trellis/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AgentProcess,
  deployOn,
  type E2eServer,
  killLeftovers,
  logText,
  planOn,
  startAgent,
  startServer,
  TOFU,
  vineOf,
  waitForJob,
} from '../support/e2e.js';

/** Issue 6: the plan → deploy path with the server's artifacts (plans and state) in object storage. */
const BACKENDS: { name: string; peer: PeerName; start: (binary: string) => Promise<ObjectStorageServer> }[] = [
  { name: 'S3 (MinIO)', peer: 'minio', start: startMinio },
  { name: 'GCS (fake-gcs-server)', peer: 'fake-gcs-server', start: startFakeGcs },
];

for (const backend of BACKENDS) {
  const binary = requirePeer(backend.peer, `agent plan → deploy on ${backend.name}`);
  describe.skipIf(!TOFU || !binary)(`trellis-agent with artifacts on ${backend.name}`, { timeout: 180_000 }, () => {
    let storage: ObjectStorageServer;
    let bucket: string;
    let server: E2eServer;
    let agentA: AgentProcess;
    let agentB: AgentProcess;

    beforeAll(async () => {
      storage = await backend.start(binary as string);
      bucket = await storage.createBucket();
      server = await startServer(storage.artifactsEnv(bucket));
      [agentA, agentB] = await Promise.all([
        startAgent(server, { name: 'store-a' }),
        startAgent(server, { name: 'store-b' }),
      ]);
    });

    afterAll(async () => {
      await Promise.all([agentA?.stop(), agentB?.stop()]);
      killLeftovers();
      await server?.stop();
      await storage?.stop();
    });

    it('plans on one agent and applies that plan on another, plan and state kept in the bucket', async () => {
      const vine = await vineOf(server, 'bucketed', 'outputs', { cluster: 'bucketed' });
      const plan = await planOn(server, vine.id, agentA);
      expect(plan).toMatchObject({ status: 'SUCCESS' });
      const deploy = await deployOn(server, vine.id, plan, agentB);
      expect(await waitForJob(server, deploy.id)).toMatchObject({
        status: 'SUCCESS',
        claimed_by_worker_id: agentB.workerId,
      });
      expect(await logText(server, deploy.id)).toMatch(new RegExp(`plan of job ${plan.id} downloaded: .* checked`));
      expect((await server.user.getConfiguration(vine.id)).status).toBe('DEPLOYED');
      const objects = await storage.listObjects(bucket);
      expect(objects.some((key) => key.endsWith(`/${plan.id}/terraform.plan.out`))).toBe(true);
      expect(objects.some((key) => key.includes(`state/`) && key.includes(vine.id))).toBe(true);
    });
  });
}
