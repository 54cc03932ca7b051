import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TrellisApiError, TrellisClient } from '@trellis/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AgentProcess,
  type E2eServer,
  killLeftovers,
  logText,
  RELEASE_SECRET,
  startAgent,
  startServer,
  TOFU,
  waitForJob,
} from '../support/e2e.js';

/** What the cloud worker's own IaC run deployed: its state in a backend of its own. */
const WORKER_INFRA = `
terraform {
  backend "local" {}
}

variable "marker" {
  type = string
}

resource "terraform_data" "agent_host" {
  input = var.marker

  provisioner "local-exec" {
    when    = destroy
    command = "echo destroyed > \${self.input}"
  }
}
`;

describe.skipIf(!TOFU)('DESTROY_WORKER', { timeout: 180_000 }, () => {
  let server: E2eServer;
  let agent: AgentProcess;
  let ci: TrellisClient;
  let ownerId: string;
  const dir = mkdtempSync(join(tmpdir(), 'trellis-agent-destroy-worker-'));

  beforeAll(async () => {
    server = await startServer();
    agent = await startAgent(server, { name: 'destroyer' });
    ci = new TrellisClient({ baseUrl: server.url, auth: { kind: 'release', secret: RELEASE_SECRET } });
    ownerId = (await server.user.whoami()).id;
  });

  afterAll(async () => {
    await agent?.stop();
    killLeftovers();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const workerClient = (id: string, token: string) =>
    new TrellisClient({ baseUrl: server.url, auth: { kind: 'worker', workerId: id, workerToken: token } });

  it('destroys what the cloud worker’s deploy metadata describes, then its token stops working', async () => {
    // The cloud worker's own deployment, as its IaC run would have made it.
    const infra = join(dir, 'infra');
    const statePath = join(dir, 'cloud-worker.tfstate');
    const marker = join(dir, 'destroyed.txt');
    execFileSync('mkdir', ['-p', infra]);
    writeFileSync(join(infra, 'main.tf'), WORKER_INFRA);
    const env = { ...process.env, TF_IN_AUTOMATION: '1', TF_VAR_marker: marker };
    execFileSync(TOFU as string, ['init', '-input=false', '-no-color', `-backend-config=path=${statePath}`], {
      cwd: infra,
      env,
    });
    execFileSync(TOFU as string, ['apply', '-input=false', '-no-color', '-auto-approve'], { cwd: infra, env });
    expect(JSON.parse(readFileSync(statePath, 'utf8')).resources).toHaveLength(1);

    const cloud = await ci.registerTendril({
      name: 'cloud-eu-1',
      owner_id: ownerId,
      metadata: {
        deploy: {
          source: { type: 'inline', files: { 'main.tf': WORKER_INFRA } },
          variables: { marker },
          engine: { name: 'tofu' },
          backend_config: { path: statePath },
        },
      },
    });
    const cloudClient = workerClient(cloud.worker_id, cloud.worker_token);
    await cloudClient.heartbeat('1.0.0');

    const job = await server.user.createJob({ job_type: 'DESTROY_WORKER', target_worker_id: cloud.worker_id });
    const done = await waitForJob(server, job.id);
    expect(done).toMatchObject({ status: 'SUCCESS', claimed_by_worker_id: agent.workerId });
    expect(done.execution_metadata).toMatchObject({ target_worker_id: cloud.worker_id, destroyed: true });
    const log = await logText(server, job.id);
    expect(log).toContain(`destroying the infrastructure of worker cloud-eu-1 (${cloud.worker_id})`);
    expect(log).toContain('Destroy complete! Resources: 1 destroyed.');
    expect(log).toContain('-backend-config=path=***');

    expect(readFileSync(marker, 'utf8').trim()).toBe('destroyed');
    expect(JSON.parse(readFileSync(statePath, 'utf8')).resources).toEqual([]);
    const refused = await cloudClient.heartbeat('1.0.0').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TrellisApiError);
    expect((refused as TrellisApiError).status).toBe(401);
    expect((await server.user.getWorker(cloud.worker_id)).status).toBe('DESTROYED');
  });

  it('refuses to destroy a cloud worker whose metadata says nothing about its infrastructure', async () => {
    const cloud = await ci.registerTendril({ name: 'cloud-unknown', owner_id: ownerId, metadata: { region: 'eu' } });
    const job = await server.user.createJob({ job_type: 'DESTROY_WORKER', target_worker_id: cloud.worker_id });
    const failed = await waitForJob(server, job.id);
    expect(failed.status).toBe('FAILED');
    expect(failed.error_message).toMatch(/has no deploy metadata \(metadata\.deploy\)/);
    await workerClient(cloud.worker_id, cloud.worker_token).heartbeat('1.0.0');
    expect(existsSync(join(dir, 'never'))).toBe(false);
  });
});
