/**
 * Agents use the provider mirror (issue 28): a real `trellis-agent` runs a job whose configuration
 * needs `hashicorp/null`, on a host where no registry is reachable, and OpenTofu installs it from
 * the owner's mirror on the control plane with the job's own registry token (over TLS).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { personalNamespace } from '@trellis/core';
import {
  caRequest,
  NULL_PROVIDER_CONFIG,
  testProviderBinary,
  vineyardWithVine,
  writeProviderMirrorDir,
} from '@trellis/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AgentProcess,
  type E2eServer,
  killLeftovers,
  logText,
  startAgent,
  startTlsServer,
  eventually,
  TOFU,
  type TlsE2eServer,
  waitForJob,
} from '../support/e2e.js';

const provider = testProviderBinary();

describe.skipIf(!TOFU || !provider)('a job whose provider only the mirror serves', () => {
  let server: TlsE2eServer;
  let user: E2eServer['user'];
  let agent: AgentProcess;
  const dirs: string[] = [];

  beforeAll(async () => {
    const engineHome = mkdtempSync(join(tmpdir(), 'trellis-agent-mirror-home-'));
    dirs.push(engineHome);
    server = await startTlsServer();
    user = server.user;
    const { ca, url: base } = server;

    // Fill the person's mirror from a `tofu providers mirror` directory.
    const mirror = writeProviderMirrorDir(provider as string);
    dirs.push(mirror.dir);
    const zip = readFileSync(join(mirror.dir, mirror.zip));
    const namespace = personalNamespace((await user.whoami()).id);
    const pushed = await caRequest(
      ca,
      `${base}/api/registry/mirror-archives/${namespace}/registry.opentofu.org/hashicorp/null/3.2.4/${mirror.platform}`,
      {
        method: 'PUT',
        headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/zip' },
        body: zip,
      },
    );
    expect(pushed.status, pushed.text).toBe(201);

    agent = await startAgent(server, {
      name: 'mirror-agent',
      env: {
        NODE_EXTRA_CA_CERTS: ca.caFile,
        SSL_CERT_FILE: ca.caFile,
        // No registry is reachable from the engine: any other host goes to a proxy that answers nothing.
        HTTPS_PROXY: 'http://127.0.0.1:9',
        NO_PROXY: 'localhost',
        HOME: engineHome,
      },
    });
  }, 180_000);

  afterAll(async () => {
    await agent?.stop();
    killLeftovers();
    await server?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('installs hashicorp/null from the mirror with the job token, deploys, and leaves no CLI configuration behind', async () => {
    const { vine } = await vineyardWithVine(user, 'mirrored', {
      source: { type: 'inline', files: { 'main.tf': NULL_PROVIDER_CONFIG } },
      variables: {},
      engine: 'tofu',
    });
    const job = await user.createJob({ job_type: 'DEPLOY', configuration_id: vine.id });
    const done = await waitForJob({ user }, job.id, undefined, 180_000);
    const log = await logText({ user } as never, job.id);
    expect(done.status, log).toBe('SUCCESS');
    expect(log).toContain('providers: registry.opentofu.org/hashicorp/null from the provider mirror');
    // Downloaded from the mirror once, checked against the hashes it serves.
    expect(log).toMatch(/Installed hashicorp\/null v3\.2\.4 \(verified checksum\)/);
    expect(log).not.toContain('Unable to open CLI configuration file');
    expect(log).not.toMatch(/trr_[A-Za-z0-9]/);
    expect(log).toContain(`providers: cached in ${join(agent.workDir, 'plugin-cache')} for this agent's jobs`);
    // The workspace, and the CLI configuration with the token in it, go with the job (the agent
    // removes them once it has reported the end, so a moment after the control plane has it); the
    // providers it installed stay in the agent's cache.
    await eventually('the job workspace to be removed', () =>
      readdirSync(agent.workDir).some((name) => name.startsWith('job-')) ? undefined : true,
    );
    expect(readdirSync(agent.workDir)).toEqual(['plugin-cache']);
  }, 240_000);

  it("takes the provider from the agent's cache in the next job instead of downloading it again", async () => {
    const { vine } = await vineyardWithVine(user, 'cached', {
      source: { type: 'inline', files: { 'main.tf': NULL_PROVIDER_CONFIG } },
      variables: {},
      engine: 'tofu',
    });
    const job = await user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
    const done = await waitForJob({ user }, job.id, undefined, 180_000);
    const log = await logText({ user } as never, job.id);
    expect(done.status, log).toBe('SUCCESS');
    // OpenTofu says "Installing … to the shared cache directory" either way; a package it takes from
    // the cache as it is, without fetching it again, it reports "unauthenticated" (nothing was
    // downloaded to check), where the first job's download was "verified checksum".
    expect(log, log).toMatch(/Installed hashicorp\/null v3\.2\.4 \(unauthenticated\)/);
    expect(log).toMatch(/Using hashicorp\/null v3\.2\.4 from the shared cache directory/);
  }, 240_000);
});
