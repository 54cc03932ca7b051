/**
 * Which vines use which module version (issue 28), end to end: a real `trellis-agent` runs a PLAN
 * whose configuration installs a module from the owner's registry on the control plane (over TLS,
 * with the job's registry token); the agent reports what `init` installed, and the control plane
 * answers the vine as a user of that version.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { personalNamespace } from '@trellis/core';
import { tarGz, vineyardWithVine } from '@trellis/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AgentProcess,
  type E2eServer,
  killLeftovers,
  logText,
  startAgent,
  startTlsServer,
  TOFU,
  type TlsE2eServer,
  waitForJob,
} from '../support/e2e.js';

describe.skipIf(!TOFU)('a plan that installs a module of the registry', () => {
  let server: TlsE2eServer;
  let user: E2eServer['user'];
  let agent: AgentProcess;
  let host: string;
  let namespace: string;
  const dirs: string[] = [];

  beforeAll(async () => {
    const engineHome = mkdtempSync(join(tmpdir(), 'trellis-agent-modules-home-'));
    dirs.push(engineHome);
    // A registry host needs a dot: the loopback address (the test certificate names it too).
    server = await startTlsServer({}, '127.0.0.1');
    ({ host, user } = server);
    namespace = personalNamespace((await user.whoami()).id);
    for (const version of ['1.1.0', '1.2.0']) {
      const tarball = tarGz([{ path: 'main.tf', content: `output "version" {\n  value = "${version}"\n}\n` }]);
      await user.publishModule({ namespace, name: 'vpc', system: 'aws', version }, tarball, tarball.length);
    }
    agent = await startAgent(server, {
      name: 'modules-agent',
      env: { NODE_EXTRA_CA_CERTS: server.ca.caFile, SSL_CERT_FILE: server.ca.caFile, HOME: engineHome },
    });
  }, 180_000);

  afterAll(async () => {
    await agent?.stop();
    killLeftovers();
    await server?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('reports the module and version init installed, and the vine is listed as using it', async () => {
    const { vine } = await vineyardWithVine(user, 'network', {
      source: {
        type: 'inline',
        files: {
          'main.tf': `module "vpc" {\n  source  = "${host}/${namespace}/vpc/aws"\n  version = "~> 1.1.0"\n}\n\nmodule "local" {\n  source = "./local"\n}\n`,
          'local/main.tf': 'output "ok" {\n  value = true\n}\n',
        },
      },
      variables: {},
      engine: 'tofu',
    });
    const job = await user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
    const done = await waitForJob({ user }, job.id, undefined, 180_000);
    const log = await logText({ user } as never, job.id);
    expect(done.status, log).toBe('SUCCESS');
    expect(done.execution_metadata.modules).toEqual([{ source: `${host}/${namespace}/vpc/aws`, version: '1.1.0' }]);
    expect(log).toContain(`modules: ${host}/${namespace}/vpc/aws 1.1.0`);

    const usage = await user.moduleUsage({ namespace, name: 'vpc', system: 'aws' });
    expect(usage.vines.map((used) => [used.vine_name, used.version, used.job_id])).toEqual([
      ['network', '1.1.0', job.id],
    ]);
  }, 240_000);
});
