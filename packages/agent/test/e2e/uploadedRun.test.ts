/**
 * A run of an uploaded configuration (issue 27) with a real server, a real agent and the pinned
 * OpenTofu: the configuration is uploaded through the Terraform Cloud protocol (the directory
 * above the workspace's working directory, as the stock CLI does), and a PLAN whose source is
 * that version runs in `envs/prod` inside it, reaching a module beside it, with `-target`. The
 * PLAN is queued the way the protocol's run creation will (its snapshot rewritten here, before
 * any agent runs), so this test covers the agent and the claim, not the run API.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { tarGz } from '@trellis/testkit';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AgentProcess,
  type E2eServer,
  killLeftovers,
  logText,
  startAgent,
  startServer,
  TOFU,
  waitForJob,
} from '../support/e2e.js';

const PROD = `
module "net" {
  source = "../../modules/net"
}

resource "terraform_data" "a" {
  input = module.net.cidr
}

resource "terraform_data" "b" {
  input = "b"
}
`;

describe.skipIf(!TOFU)('an uploaded configuration with real OpenTofu', { timeout: 180_000 }, () => {
  let server: E2eServer;
  let agent: AgentProcess | undefined;

  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await agent?.stop();
    killLeftovers();
    await server?.stop();
  });

  async function tfe(path: string, method = 'GET', body?: unknown) {
    const response = await fetch(`${server.url}/api/v2${path}`, {
      method,
      headers: {
        authorization: `Bearer ${server.user.token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/vnd.api+json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    expect(response.status, text).toBeLessThan(300);
    return JSON.parse(text);
  }

  it('runs the version in the working directory inside it, planning only the target', async () => {
    const account = await tfe('/account/details');
    const org = account.data.attributes.username as string;
    const ws = await tfe(`/organizations/${org}/workspaces`, 'POST', {
      data: { type: 'workspaces', attributes: { name: 'uploaded', 'working-directory': 'envs/prod' } },
    });
    const vineId = (ws.data.id as string).slice('ws-'.length);
    // A stand-in source lets a PLAN of the CLI's workspace be queued (the run API will not need it).
    await server.user.updateConfiguration(vineId, {
      source: { type: 'inline', files: { 'main.tf': '' } },
      engine: { name: 'tofu' },
    });
    const cv = await tfe(`/workspaces/${ws.data.id}/configuration-versions`, 'POST', {
      data: { type: 'configuration-versions', attributes: { 'auto-queue-runs': false } },
    });
    const archive = tarGz([
      { path: 'envs/prod/main.tf', content: PROD },
      { path: 'modules/net/main.tf', content: 'output "cidr" { value = "10.0.0.0/16" }\n' },
    ]);
    const put = await fetch(cv.data.attributes['upload-url'], { method: 'PUT', body: archive });
    expect(put.status).toBe(200);
    const versionId = (cv.data.id as string).slice('cv-'.length);

    const job = await server.user.createJob({
      job_type: 'PLAN',
      configuration_id: vineId,
      run_options: { target: ['terraform_data.a'] },
    });
    const { variables: _variables, ...summary } = {
      ...job.config_snapshot,
      source: { type: 'upload', configuration_version_id: versionId, path: 'envs/prod' },
    };
    const hash = createHash('sha256').update(`upload:${job.id}`).digest('hex');
    const db = new Database(join(server.dataDir, 'trellis.db'));
    try {
      db.prepare('INSERT INTO config_snapshots (owner_id, config_hash, snapshot) VALUES (?, ?, ?)').run(
        job.owner_id,
        hash,
        JSON.stringify({ ...summary, variables: {} }),
      );
      db.prepare('UPDATE jobs SET config_hash = ?, config_snapshot = ? WHERE id = ?').run(
        hash,
        JSON.stringify(summary),
        job.id,
      );
    } finally {
      db.close();
    }

    agent = await startAgent(server, { name: 'uploads' });
    const planned = await waitForJob(server, job.id);
    const log = await logText(server, job.id);
    expect(planned.status, log).toBe('SUCCESS');
    expect(log).toMatch(
      new RegExp(
        `source: configuration version ${versionId} \\(${archive.length} bytes, sha256 [0-9a-f]{64} checked\\), path envs/prod`,
      ),
    );
    expect(log).toContain('plan: run options -target=terraform_data.a');
    expect(planned.execution_metadata.resource_changes).toEqual([{ address: 'terraform_data.a', actions: ['create'] }]);
  });
});
