import { existsSync, readdirSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TrellisClient } from '@trellis/client';
import { coreServices, NotFoundError } from '@trellis/core';
import { resolve } from '@trellis/server';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  type AgentClient,
  type RunningControlPlane,
  startControlPlane,
  vineyardWithConfiguration,
} from './support/controlPlane.js';
import { describeEachDialect } from './support/dialects.js';

function basic(agent: AgentClient): string {
  return `Basic ${Buffer.from(`${agent.workerId}:${agent.workerToken}`).toString('base64')}`;
}

const state = (serial: number) =>
  JSON.stringify({ version: 4, terraform_version: '1.12.6', serial, lineage: 'lineage-1', outputs: {}, resources: [] });

const MiB = 1024 * 1024;
const STATE_LIMIT = MiB;
const VERSIONS_KEPT = 3;

/**
 * POSTs a state that declares `declared` bytes (or none: chunked) but sends only `sent` of them,
 * and waits for the answer without ever sending the rest: an answer proves the server decided
 * before reading the body. The connection is cut once the answer is in.
 */
function postPartially(
  url: string,
  authorization: string,
  options: { declared: number | null; sent: number },
): Promise<{ status: number; body: string; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization, 'content-type': 'application/json' };
    if (options.declared !== null) headers['content-length'] = String(options.declared);
    const req = request(url, { method: 'POST', headers });
    req.on('response', (res) => {
      const parts: Buffer[] = [];
      res.on('data', (part: Buffer) => parts.push(part));
      res.on('end', () => {
        resolve({
          status: res.statusCode ?? 0,
          body: Buffer.concat(parts).toString('utf8'),
          connection: res.headers.connection,
        });
        req.destroy();
      });
    });
    // Once answered, the server may close the connection under the unsent rest: that is the point.
    req.on('error', (error) => reject(error));
    req.write(Buffer.concat([Buffer.from('{"serial": 1, "lineage": "l", "pad": "'), Buffer.alloc(options.sent, 0x61)]));
  });
}

/** Every file of the server's file artifact store, temp files included. */
function storedFiles(server: RunningControlPlane): string[] {
  const root = fileURLToPath(server.controlPlane.config.artifactsUrl);
  if (!existsSync(root)) return [];
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

describeEachDialect('the OpenTofu/Terraform http state backend', (dialect) => {
  let server: RunningControlPlane;
  let user: TrellisClient;

  beforeAll(async () => {
    server = await startControlPlane(dialect, {
      env: { TRELLIS_MAX_STATE_BYTES: String(STATE_LIMIT), TRELLIS_STATE_VERSIONS_KEPT: String(VERSIONS_KEPT) },
    });
    user = await server.userClient('state@example.com');
  });
  afterAll(async () => {
    await server?.close();
  });

  async function running(name: string) {
    const { configuration } = await vineyardWithConfiguration(user, name);
    const job = await user.createJob({ job_type: 'PLAN', configuration_id: configuration.id });
    const agent = await server.agentClient(user, `${name}-agent`);
    expect((await agent.claimJob())?.job.id).toBe(job.id);
    return { configuration, job, agent, url: `${server.url}/api/state/${configuration.id}` };
  }

  it('reads nothing, then stores and serves versions, with Basic auth as the engine sends it', async () => {
    const { agent, url } = await running('basic');
    expect((await fetch(url, { headers: { authorization: basic(agent) } })).status).toBe(204);
    const put = await fetch(url, {
      method: 'POST',
      headers: { authorization: basic(agent), 'content-type': 'application/json' },
      body: state(1),
    });
    expect(put.status).toBe(200);
    await fetch(url, { method: 'POST', headers: { authorization: basic(agent) }, body: state(2) });
    const got = await fetch(url, { headers: { authorization: basic(agent) } });
    expect(got.status).toBe(200);
    expect(JSON.parse(await got.text()).serial).toBe(2);
    expect(got.headers.get('etag')).toMatch(/^"[0-9a-f]{64}"$/);
    const bad = await fetch(url, { method: 'POST', headers: { authorization: basic(agent) }, body: 'not json' });
    expect([bad.status, (await bad.json()).code]).toEqual([400, 'invalid_state_file']);
  });

  it('locks with LOCK, answers 423 with the holder, and requires the lock id to write and unlock', async () => {
    const { agent, url } = await running('locks');
    const headers = { authorization: basic(agent), 'content-type': 'application/json' };
    const lockA = { ID: 'lock-a', Operation: 'OperationTypeApply', Who: 'agent@host', Version: '1.12.6' };
    expect((await fetch(url, { method: 'LOCK', headers, body: JSON.stringify(lockA) })).status).toBe(200);
    const taken = await fetch(url, { method: 'LOCK', headers, body: JSON.stringify({ ...lockA, ID: 'lock-b' }) });
    expect(taken.status).toBe(423);
    expect((await taken.json()).ID).toBe('lock-a');
    const unlocked = await fetch(`${url}?ID=lock-b`, { method: 'POST', headers, body: state(5) });
    expect([unlocked.status, (await unlocked.json()).code]).toEqual([409, 'state_locked']);
    expect((await fetch(`${url}?ID=lock-a`, { method: 'POST', headers, body: state(5) })).status).toBe(200);
    const mismatch = await fetch(url, { method: 'UNLOCK', headers, body: JSON.stringify({ ID: 'lock-b' }) });
    expect(mismatch.status).toBe(409);
    expect((await mismatch.json()).ID).toBe('lock-a');
    expect((await fetch(url, { method: 'UNLOCK', headers, body: JSON.stringify({ ID: 'lock-a' }) })).status).toBe(200);
    expect((await fetch(url, { method: 'POST', headers, body: state(6) })).status).toBe(200);
  });

  it('is only for the agent running a job of that vine', async () => {
    const { agent, url, job } = await running('owner-only');
    const idle = await server.agentClient(user, 'idle-agent');
    const forbidden = await fetch(url, { headers: { authorization: basic(idle) } });
    expect([forbidden.status, (await forbidden.json()).code]).toEqual([403, 'state_not_for_worker']);
    const wrongPassword = `Basic ${Buffer.from(`${agent.workerId}:nope`).toString('base64')}`;
    expect((await fetch(url, { headers: { authorization: wrongPassword } })).status).toBe(401);
    const stranger = await server.agentClient(await server.userClient('other@example.com'), 'stranger');
    expect((await fetch(url, { headers: { authorization: basic(stranger) } })).status).toBe(404);
    await agent.reportStatus(job.id, { status: 'SUCCESS' });
    expect((await fetch(url, { headers: { authorization: basic(agent) } })).status).toBe(403);
  });

  it('refuses a foreign 60 MiB write before reading its body, and stores nothing', async () => {
    const { url } = await running('foreign-write');
    const before = storedFiles(server);
    const stranger = await server.agentClient(await server.userClient('foreign@example.com'), 'foreign');
    const idle = await server.agentClient(user, 'idle-writer');
    // Eight at once, as in the report; 256 KiB of each 60 MiB are sent, and every answer comes
    // while the client still owes the rest.
    const foreign = await Promise.all(
      Array.from({ length: 8 }, () => postPartially(url, basic(stranger), { declared: 60 * MiB, sent: 256 * 1024 })),
    );
    for (const answer of foreign) {
      expect([answer.status, JSON.parse(answer.body).code]).toEqual([404, 'configuration_not_found']);
      expect(answer.connection).toBe('close');
    }
    const notRunning = await postPartially(url, basic(idle), { declared: 60 * MiB, sent: 256 * 1024 });
    expect([notRunning.status, JSON.parse(notRunning.body).code]).toEqual([403, 'state_not_for_worker']);
    expect(storedFiles(server)).toEqual(before);
  });

  it('refuses a declared Content-Length over the limit at once, and an undeclared one while it streams', async () => {
    const { agent, url } = await running('too-large');
    const before = storedFiles(server);
    const declared = await postPartially(url, basic(agent), { declared: STATE_LIMIT + 1, sent: 1024 });
    expect([declared.status, JSON.parse(declared.body).code]).toEqual([413, 'state_too_large']);

    const oversized = `{"serial": 9, "lineage": "l", "pad": "${'a'.repeat(STATE_LIMIT)}"}`;
    const chunked = await fetch(url, {
      method: 'POST',
      headers: { authorization: basic(agent) },
      body: new Blob([oversized]).stream(),
      duplex: 'half',
    } as RequestInit);
    expect([chunked.status, (await chunked.json()).code]).toEqual([413, 'state_too_large']);
    expect(storedFiles(server)).toEqual(before);
    expect((await fetch(url, { headers: { authorization: basic(agent) } })).status).toBe(204);
  });

  it('reads serial and lineage as the state streams, whatever their place, and refuses a state without them', async () => {
    const { agent, url, configuration } = await running('header');
    const headers = { authorization: basic(agent) };
    const late = JSON.stringify({ resources: [{ serial: 'nested', lineage: 1 }], lineage: 'lin-"x"', serial: 7 });
    expect((await fetch(url, { method: 'POST', headers, body: late })).status).toBe(200);
    const owner = await server.controlPlane.useCases.auth.ensureUser({ email: 'state@example.com' });
    const [stored] = await server.controlPlane.useCases.states.versions(owner.id, configuration.id);
    expect([stored?.serial, stored?.lineage]).toEqual([7, 'lin-"x"']);
    for (const bad of ['{"serial": 1}', '{"serial": 1.5, "lineage": "l"}', '{"serial": 1, "lineage": "l"} {}', '[1]']) {
      const refused = await fetch(url, { method: 'POST', headers, body: bad });
      expect([refused.status, (await refused.json()).code]).toEqual([400, 'invalid_state_file']);
    }
    expect(await server.controlPlane.useCases.states.versions(owner.id, configuration.id)).toHaveLength(1);
  });

  it(`keeps the newest ${VERSIONS_KEPT} versions and deletes the bytes of older ones`, async () => {
    const { agent, url, configuration } = await running('pruned');
    const owner = await server.controlPlane.useCases.auth.ensureUser({ email: 'state@example.com' });
    const artifacts = resolve(server.controlPlane.container, coreServices.artifactStore);
    const keys: string[] = [];
    const filesBefore = storedFiles(server).length;
    for (let serial = 1; serial <= VERSIONS_KEPT + 2; serial += 1) {
      const put = await fetch(url, { method: 'POST', headers: { authorization: basic(agent) }, body: state(serial) });
      expect(put.status).toBe(200);
      const [newest] = await server.controlPlane.useCases.states.versions(owner.id, configuration.id);
      keys.push(newest?.storage_key as string);
    }
    const versions = await server.controlPlane.useCases.states.versions(owner.id, configuration.id);
    expect(versions.map((version) => version.serial)).toEqual([5, 4, 3]);
    expect(storedFiles(server).length - filesBefore).toBe(VERSIONS_KEPT);
    for (const pruned of keys.slice(0, 2)) await expect(artifacts.get(pruned)).rejects.toThrow(NotFoundError);
    for (const kept of keys.slice(2)) expect((await artifacts.get(kept)).size).toBeGreaterThan(0);
  });
});
