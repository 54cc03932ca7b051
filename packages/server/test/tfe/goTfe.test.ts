/**
 * go-tfe's own integration tests (the version OpenTofu v1.12.6 pins, built by
 * `scripts/peers.sh go-tfe`) for workspaces, state versions, variables and configuration versions, against a real
 * `trellis-server` over TLS. Each top-level test runs alone (one that panics cannot take the
 * others with it); the ones docs/terraform-cloud.md lists as passing must pass.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  caRequest,
  createTestDatabase,
  fileUrl,
  goTfeSource,
  makeTestCa,
  requirePeer,
  type ServerProcess,
  startServerProcess,
  type TestCa,
  type TestDatabase,
} from '@trellis/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOOTSTRAP_TOKEN } from '../support/controlPlane.js';

const run = promisify(execFile);
const TESTS = requirePeer('go-tfe.test', "go-tfe's integration tests");
const SOURCE = goTfeSource();
const present = TESTS !== null;

/** The go-tfe tests docs/terraform-cloud.md says pass against Trellis. */
export const PASSING = [
  'TestConfigurationVersionsCreate',
  'TestConfigurationVersionsDownload',
  'TestConfigurationVersionsList',
  'TestConfigurationVersionsRead',
  'TestConfigurationVersionsUpload',
  'TestConfigurationVersions_Unmarshal',
  'TestStateVersionsCurrent',
  'TestStateVersionsDownload',
  'TestStateVersionsReadWithOptions',
  'TestStateVersionsUpload',
  'TestWorkspacesDelete',
  'TestWorkspacesDeleteByID',
  'TestWorkspacesForceUnlock',
  'TestWorkspacesLock',
  'TestWorkspacesReadByID',
  'TestWorkspacesReadSource',
  'TestWorkspacesReadWithOptions',
  'TestWorkspacesSafeDelete',
  'TestWorkspacesSafeDeleteByID',
  'TestWorkspacesUpdateByID',
  'TestWorkspacesUpdateTableDriven',
  'TestWorkspaces_RemoveTags',
];

type Outcome = 'PASS' | 'FAIL' | 'SKIP';

describe.skipIf(!present)("go-tfe's integration tests against trellis-server", () => {
  let ca: TestCa;
  let database: TestDatabase;
  let server: ServerProcess;
  let base: string;
  let token: string;
  const dirs: string[] = [];

  beforeAll(async () => {
    ca = makeTestCa();
    database = await createTestDatabase('sqlite');
    const dataDir = mkdtempSync(join(tmpdir(), 'trellis-go-tfe-'));
    dirs.push(dataDir, ca.dir);
    server = await startServerProcess({
      DATABASE_URL: database.url,
      TRELLIS_DATA_DIR: dataDir,
      TRELLIS_ARTIFACTS_URL: fileUrl(join(dataDir, 'artifacts')),
      TRELLIS_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
      TRELLIS_TLS_CERT_FILE: ca.certFile,
      TRELLIS_TLS_KEY_FILE: ca.keyFile,
      // go-tfe's tests make hundreds of requests in a few seconds.
      TRELLIS_TFE_AUTH_FAILURE_LIMIT: '100000',
    });
    base = `https://localhost:${new URL(server.url).port}`;
    const signIn = await caRequest(ca, `${base}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`);
    const cookie = (
      [signIn.headers['set-cookie'] ?? []].flat().find((value) => value.includes('trellis_session=')) ?? ''
    ).split(';')[0] as string;
    const created = await caRequest(ca, `${base}/api/tokens`, {
      method: 'POST',
      headers: { cookie, origin: base, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'go-tfe', expires_in_days: 1 }),
    });
    expect(created.status, created.text).toBe(201);
    token = JSON.parse(created.text).token;
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await database?.drop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('passes the tests the documentation lists as passing', async () => {
    // ENABLE_TFE=1: Trellis is a self-hosted server, as Terraform Enterprise is, so go-tfe runs its
    // tests as against one (HCP-only subscription and billing steps are skipped by go-tfe itself).
    const env = { ...process.env, TFE_ADDRESS: base, TFE_TOKEN: token, SSL_CERT_FILE: ca.caFile, ENABLE_TFE: '1' };
    const listed = await run(
      TESTS as string,
      ['-test.list', '^(TestWorkspaces|TestStateVersions|TestVariables|TestConfigurationVersions)'],
      { cwd: SOURCE, env },
    );
    const names = listed.stdout.split('\n').filter((name) => /^Test\w+$/.test(name));
    // Every test the documentation lists exists in this go-tfe; only those run here (the others'
    // outcomes, in docs/terraform-cloud.md, were read once: a failing one waits out its timeouts).
    expect(PASSING.filter((name) => !names.includes(name))).toEqual([]);
    const outcomes: Record<string, Outcome> = {};
    for (const name of PASSING) {
      const result = await run(TESTS as string, ['-test.run', `^${name}$`, '-test.v', '-test.timeout', '120s'], {
        cwd: SOURCE,
        env,
        maxBuffer: 64 * 1024 * 1024,
      }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
      const line = new RegExp(`^--- (PASS|FAIL|SKIP): ${name} `, 'm').exec(result.stdout);
      outcomes[name] = (line?.[1] as Outcome | undefined) ?? 'FAIL';
    }
    process.stdout.write(`go-tfe outcomes: ${JSON.stringify(outcomes, null, 1)}\n`);
    const failing = PASSING.filter((name) => outcomes[name] !== 'PASS');
    expect(failing, JSON.stringify(outcomes, null, 1)).toEqual([]);
  }, 900_000);
});
