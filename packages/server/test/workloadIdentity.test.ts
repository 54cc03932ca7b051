/**
 * The OIDC issuer in the server (issue 16): TRELLIS_OIDC_* settings, the public discovery and JWKS
 * endpoints, replicas on one database signing with the same key, and `trellis-server keys rotate`.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { TrellisClient } from '@trellis/client';
import {
  createTestDatabase,
  SERVER_BIN,
  type ServerProcess,
  startServerProcess,
  type TestDatabase,
  testPostgresPoolSize,
} from '@trellis/testkit';
import { createLocalJWKSet, decodeProtectedHeader, type JSONWebKeySet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { BOOTSTRAP_TOKEN, JWT_SECRET } from './support/controlPlane.js';
import { describePostgres } from './support/dialects.js';

const base = { CLI_JWT_SECRET: JWT_SECRET, TRELLIS_DATA_DIR: '/tmp/trellis-oidc-config' };

describe('TRELLIS_OIDC_* settings', () => {
  it('defaults: the public URL as issuer, RS256, one hour, keys rotated every 90 days', () => {
    expect(loadConfig({ ...base, TRELLIS_WEB_URL: 'https://trellis.example.com' }).oidc).toEqual({
      issuer: null,
      algorithm: 'RS256',
      tokenLifetimeSeconds: 3600,
      keyRotationDays: 90,
    });
  });

  it('takes an https issuer, or plain http on this machine only', () => {
    const https = loadConfig({ ...base, TRELLIS_OIDC_ISSUER: 'https://id.example.com/trellis/' });
    expect(https.oidc.issuer).toBe('https://id.example.com/trellis');
    expect(loadConfig({ ...base, TRELLIS_OIDC_ISSUER: 'http://127.0.0.1:8080' }).oidc.issuer).toBe(
      'http://127.0.0.1:8080',
    );
    expect(loadConfig({ ...base, TRELLIS_OIDC_ISSUER: 'http://localhost:8080' }).oidc.issuer).toBe(
      'http://localhost:8080',
    );
    expect(() => loadConfig({ ...base, TRELLIS_OIDC_ISSUER: 'http://trellis.example.com' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, TRELLIS_OIDC_ISSUER: 'https://x.example.com/?a=1' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, TRELLIS_OIDC_ISSUER: 'not a url' })).toThrow(ConfigError);
  });

  it('warns when the default issuer, the public URL, is plain http away from this machine', () => {
    const config = loadConfig({ ...base, TRELLIS_WEB_URL: 'http://trellis.example.com' });
    expect(config.warnings.join('\n')).toContain('OIDC issuer defaults to the public URL http://trellis.example.com');
    expect(loadConfig({ ...base }).warnings.join('\n')).not.toContain('OIDC issuer');
  });

  it('ES256, the lifetime (at most 12 hours) and the rotation interval', () => {
    const config = loadConfig({
      ...base,
      TRELLIS_OIDC_SIGNING_ALGORITHM: 'ES256',
      TRELLIS_OIDC_TOKEN_LIFETIME_S: '43200',
      TRELLIS_OIDC_KEY_ROTATION_DAYS: '0',
    });
    expect(config.oidc).toMatchObject({ algorithm: 'ES256', tokenLifetimeSeconds: 43200, keyRotationDays: 0 });
    expect(() => loadConfig({ ...base, TRELLIS_OIDC_TOKEN_LIFETIME_S: '43201' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, TRELLIS_OIDC_SIGNING_ALGORITHM: 'HS256' })).toThrow(ConfigError);
  });
});

async function login(url: string): Promise<TrellisClient & { token: string }> {
  const bootstrap = await fetch(`${url}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`, { redirect: 'manual' });
  const cookie = (bootstrap.headers.get('set-cookie') ?? '').split(';')[0] as string;
  const web = new TrellisClient({ baseUrl: url, auth: { kind: 'cookie', cookie, origin: new URL(url).origin } });
  const deviceCode = crypto.randomUUID();
  const { verification_code } = await web.generateCliLogin(deviceCode);
  const { access_token } = await web.exchangeCliLogin({ device_code: deviceCode, verification_code });
  const client = new TrellisClient({ baseUrl: url, auth: { kind: 'bearer', accessToken: () => access_token } });
  return Object.assign(client, { token: access_token });
}

function runServerCommand(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [SERVER_BIN, ...args], {
      env: { PATH: process.env.PATH, ...env, TRELLIS_LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', fail);
    child.on('close', (code) => (code === 0 ? done({ code, stdout }) : fail(new Error(`exit ${code}: ${stderr}`))));
  });
}

describePostgres('the OIDC issuer across two trellis-server processes on one Postgres', () => {
  let database: TestDatabase;
  const dirs: string[] = [];
  let a: ServerProcess;
  let b: ServerProcess;
  let envOf: (name: string) => Record<string, string>;
  const ISSUER = 'https://trellis.example.com';

  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    const artifacts = mkdtempSync(join(tmpdir(), 'trellis-oidc-artifacts-'));
    dirs.push(artifacts);
    envOf = (name: string) => {
      const dataDir = mkdtempSync(join(tmpdir(), `trellis-oidc-${name}-`));
      dirs.push(dataDir);
      return {
        DATABASE_URL: database.url,
        TRELLIS_DB_POOL_MAX: String(testPostgresPoolSize()),
        TRELLIS_DATA_DIR: dataDir,
        TRELLIS_ARTIFACTS_URL: pathToFileURL(artifacts).href,
        CLI_JWT_SECRET: JWT_SECRET,
        TRELLIS_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
        TRELLIS_OIDC_ISSUER: ISSUER,
      };
    };
    // Started together on an empty database: both look for a signing key at once, one key results.
    [a, b] = await Promise.all([startServerProcess(envOf('a')), startServerProcess(envOf('b'))]);
  }, 90_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await database?.drop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const jwksOf = async (url: string) => (await (await fetch(`${url}/.well-known/jwks.json`)).json()) as JSONWebKeySet;

  it('serves discovery and the JWKS without credentials; both replicas sign with the same key', async () => {
    const discovery = await fetch(`${a.url}/.well-known/openid-configuration`);
    expect(discovery.status).toBe(200);
    expect(await discovery.json()).toMatchObject({ issuer: ISSUER, jwks_uri: `${ISSUER}/.well-known/jwks.json` });
    const keysA = await jwksOf(a.url);
    expect(keysA.keys).toHaveLength(1);
    expect(await jwksOf(b.url)).toEqual(keysA);

    const user = await login(a.url);
    const vineyard = await user.createVineyard('oidc');
    const vine = await user.createConfiguration({
      name: 'net',
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': '' } },
      cloud_identity: { kind: 'oidc', provider: 'aws', role_arn: 'arn:aws:iam::123456789012:role/deploy' },
    });
    await user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
    const { worker_id, worker_token } = await user.registerAgent({ name: 'b-agent' });
    const agentOnB = new TrellisClient({
      baseUrl: b.url,
      auth: { kind: 'worker', workerId: worker_id, workerToken: worker_token },
    });
    const claimed = await agentOnB.claimJob();
    const token = claimed?.identity_token as string;
    // Minted by b, verified with a's JWKS.
    await jwtVerify(token, createLocalJWKSet(keysA), { issuer: ISSUER, audience: 'sts.amazonaws.com' });

    // `trellis-server keys rotate`: a new key; the old one stays published, so the token still verifies.
    const rotated = JSON.parse((await runServerCommand(['keys', 'rotate', '--json'], envOf('rotate'))).stdout);
    expect(rotated).toMatchObject({ kid: expect.any(String), algorithm: 'RS256', retired: 1 });
    const after = await jwksOf(b.url);
    expect(after.keys.map((key) => key.kid)).toEqual([rotated.kid, decodeProtectedHeader(token).kid]);
    expect(await jwksOf(a.url)).toEqual(after);
    await jwtVerify(token, createLocalJWKSet(after), { issuer: ISSUER, audience: 'sts.amazonaws.com' });
  });
});
