import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  caRequest,
  createTestDatabase,
  fileUrl,
  makeTestCa,
  providerPlatform,
  type ServerProcess,
  startServerProcess,
  Terminal,
  type TestCa,
  type TestDatabase,
  requirePeer,
  testProviderBinary,
  runProcess,
} from '@trellis/testkit';
import * as openpgp from 'openpgp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOOTSTRAP_TOKEN } from '../support/controlPlane.js';

const tofu = requirePeer('tofu', 'the provider mirror pull-through served to the stock tofu CLI');
const provider = testProviderBinary('the provider mirror pull-through served to the stock tofu CLI');
const TRELLIS_BIN = fileURLToPath(new URL('../../../cli/dist/bin/trellis.js', import.meta.url));
const [OS, ARCH] = providerPlatform().split('_') as [string, string];

/** Runs a command to its end in `env` alone. */
const command = (file: string, args: string[], env: Record<string, string> = {}) =>
  runProcess(file, args, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env } });

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

async function sign(text: string, key: openpgp.PrivateKey): Promise<Uint8Array> {
  const message = await openpgp.createMessage({ binary: Buffer.from(text) });
  return (await openpgp.sign({ message, signingKeys: key, detached: true, format: 'binary' })) as Uint8Array;
}

/** A release directory as goreleaser writes it, for this machine's platform. */
async function releaseDir(
  root: string,
  version: string,
  key: openpgp.PrivateKey,
): Promise<{ dir: string; zip: Buffer }> {
  const dir = join(root, `dist-${version}`);
  mkdirSync(dir);
  const zip = `terraform-provider-null_${version}_${OS}_${ARCH}.zip`;
  const staged = join(dir, `terraform-provider-null_v${version}`);
  writeFileSync(staged, readFileSync(provider as string), { mode: 0o755 });
  const zipped = await command('zip', ['-j', '-q', '-X', join(dir, zip), staged], {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
  });
  expect(zipped.code, zipped.stderr).toBe(0);
  rmSync(staged);
  const bytes = readFileSync(join(dir, zip));
  const shasums = `${sha256(bytes)}  ${zip}\n`;
  writeFileSync(join(dir, `terraform-provider-null_${version}_SHA256SUMS`), shasums);
  writeFileSync(join(dir, `terraform-provider-null_${version}_SHA256SUMS.sig`), await sign(shasums, key));
  return { dir, zip: bytes };
}

/**
 * A registry of the test's own over https: one provider per namespace, each wrong in its way
 * (`badsig`: SHA256SUMS signed over other bytes; `badsum`: the download names another shasum;
 * `badzip`: the archive served is not the one listed). Records every request.
 */
function fakeRegistry(ca: TestCa, zip: Buffer, key: { publicKey: string; privateKey: openpgp.PrivateKey }) {
  const requests: string[] = [];
  const name = `terraform-provider-null_1.0.0_${OS}_${ARCH}.zip`;
  const shasums = `${sha256(zip)}  ${name}\n`;
  let signature: Uint8Array;
  let forged: Uint8Array;
  const server: Server = createServer(
    { cert: readFileSync(ca.certFile), key: readFileSync(ca.keyFile) },
    (req, res) => {
      const url = new URL(req.url ?? '/', 'https://localhost');
      requests.push(url.pathname);
      const json = (body: unknown) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const base = `https://localhost:${(server.address() as AddressInfo).port}`;
      if (url.pathname === '/.well-known/terraform.json') return json({ 'providers.v1': '/v1/providers/' });
      const match = /^\/v1\/providers\/(\w+)\/null\/(versions|1\.0\.0\/download\/(\w+)\/(\w+))$/.exec(url.pathname);
      if (match?.[2] === 'versions') {
        return json({ versions: [{ version: '1.0.0', protocols: ['5.0'], platforms: [{ os: OS, arch: ARCH }] }] });
      }
      if (match) {
        const ns = match[1] as string;
        return json({
          protocols: ['5.0'],
          os: OS,
          arch: ARCH,
          filename: name,
          download_url: `${base}/files/${ns}/zip`,
          shasums_url: `${base}/files/${ns}/sums`,
          shasums_signature_url: `${base}/files/${ns}/sig`,
          shasum: ns === 'badsum' ? 'e'.repeat(64) : sha256(zip),
          signing_keys: { gpg_public_keys: [{ key_id: 'x', ascii_armor: key.publicKey }] },
        });
      }
      const file = /^\/files\/(\w+)\/(zip|sums|sig)$/.exec(url.pathname);
      if (file) {
        const [, ns, kind] = file;
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        if (kind === 'sums') return res.end(shasums);
        if (kind === 'sig') return res.end(ns === 'badsig' ? forged : signature);
        return res.end(ns === 'badzip' ? Buffer.concat([zip, Buffer.from('tampered')]) : zip);
      }
      res.writeHead(404).end();
    },
  );
  return {
    requests,
    async start(): Promise<string> {
      signature = await sign(shasums, key.privateKey);
      forged = await sign(`${'0'.repeat(64)}  ${name}\n`, key.privateKey);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return `localhost:${(server.address() as AddressInfo).port}`;
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Signs in with the bootstrap token, makes the organization `acme` and an admin API token of it. */
async function acmeToken(ca: TestCa, base: string): Promise<string> {
  const signIn = await caRequest(ca, `${base}/auth/bootstrap?token=${BOOTSTRAP_TOKEN}`);
  const cookie = ([signIn.headers['set-cookie'] ?? []].flat().find((v) => v.includes('trellis_session=')) ?? '').split(
    ';',
  )[0] as string;
  const session = { cookie, origin: base, 'content-type': 'application/json' };
  const org = await caRequest(ca, `${base}/api/orgs`, {
    method: 'POST',
    headers: session,
    body: JSON.stringify({ name: 'acme' }),
  });
  expect(org.status, org.text).toBe(201);
  const created = await caRequest(ca, `${base}/api/tokens`, {
    method: 'POST',
    headers: session,
    body: JSON.stringify({ name: 'registry', org_id: JSON.parse(org.text).id, role: 'admin' }),
  });
  expect(created.status, created.text).toBe(201);
  return JSON.parse(created.text).token;
}

describe.skipIf(!tofu || !provider)('pull-through of the provider mirror, between two trellis-servers over TLS', () => {
  let ca: TestCa;
  const databases: TestDatabase[] = [];
  let serverA: ServerProcess;
  let serverB: ServerProcess;
  let hostA: string;
  let hostB: string;
  let tokenA: string;
  let tokenB: string;
  let work: string;
  let terminal: Terminal;
  let fake: ReturnType<typeof fakeRegistry>;
  let unlisted: ReturnType<typeof fakeRegistry>;
  let fakeHost: string;
  let unlistedHost: string;
  let zip: Buffer;

  const start = async (name: string, env: Record<string, string>) => {
    const database = await createTestDatabase('sqlite');
    databases.push(database);
    return startServerProcess({
      DATABASE_URL: database.url,
      TRELLIS_DATA_DIR: join(work, name),
      TRELLIS_ARTIFACTS_URL: fileUrl(join(work, name, 'artifacts')),
      TRELLIS_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
      TRELLIS_TLS_CERT_FILE: ca.certFile,
      TRELLIS_TLS_KEY_FILE: ca.keyFile,
      ...env,
    });
  };
  const onB = async (path: string) => {
    const answer = await caRequest(ca, `https://${hostB}${path}`, { headers: { authorization: `Bearer ${tokenB}` } });
    return {
      status: answer.status,
      headers: answer.headers,
      body: answer.text === '' ? null : JSON.parse(answer.text),
    };
  };
  const mirrorPath = (host: string, ns: string, file: string) => `/api/registry/mirror/acme/${host}/${ns}/null/${file}`;
  /** `tofu init` through B's network mirror only; every other host unreachable (a proxy that answers nothing). */
  const init = () => {
    const config = join(terminal.home, 'mirror.tfrc');
    writeFileSync(
      config,
      `provider_installation {\n  network_mirror {\n    url = "https://${hostB}/api/registry/mirror/acme/"\n  }\n}\ncredentials "${hostB}" {\n  token = "${tokenB}"\n}\n`,
    );
    const dir = terminal.dir({
      'main.tf': `terraform {\n  required_providers {\n    null = {\n      source  = "${hostA}/acme/null"\n      version = "1.0.0"\n    }\n  }\n}\nresource "null_resource" "one" {}\n`,
    });
    return terminal.run(dir, ['init', '-input=false', '-no-color'], {
      env: { TF_CLI_CONFIG_FILE: config, HTTPS_PROXY: 'http://127.0.0.1:9', NO_PROXY: hostB.split(':')[0] as string },
    });
  };

  beforeAll(async () => {
    ca = makeTestCa();
    work = mkdtempSync(join(tmpdir(), 'trellis-mirror-pull-'));
    const generated = await openpgp.generateKey({ userIDs: [{ name: 'Acme Releases', email: 'releases@acme.test' }] });
    const key = {
      publicKey: generated.publicKey,
      privateKey: await openpgp.readPrivateKey({ armoredKey: generated.privateKey }),
    };
    writeFileSync(join(work, 'key.asc'), generated.publicKey);

    // A: the private registry of acme, with acme/null 1.0.0 published and signed. On port 443: a
    // provider hostname with a port (`localhost:8443/acme/null`) cannot go through OpenTofu's
    // network mirror (the CLI makes `localhost:8443/…/index.json` a URL of scheme `localhost`).
    serverA = await start('a', { PORT: '443' });
    expect(new URL(serverA.url).port).toBe('');
    hostA = 'localhost';
    tokenA = await acmeToken(ca, `https://${hostA}`);
    const trellisOnA = (args: string[]) =>
      command(process.execPath, [TRELLIS_BIN, ...args, '--server', `https://${hostA}`], {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: work,
        XDG_CONFIG_HOME: join(work, 'config'),
        TRELLIS_TOKEN: tokenA,
        NODE_EXTRA_CA_CERTS: ca.caFile,
      });
    const added = await trellisOnA(['gpg-keys', 'add', join(work, 'key.asc'), '--namespace', 'acme']);
    expect(added.code, added.stderr).toBe(0);
    const release = await releaseDir(work, '1.0.0', key.privateKey);
    zip = release.zip;
    const published = await trellisOnA([
      'providers',
      'publish',
      release.dir,
      '--namespace',
      'acme',
      '--type',
      'null',
      '--version',
      '1.0.0',
    ]);
    expect(published.code, published.stderr).toBe(0);

    fake = fakeRegistry(ca, zip, key);
    fakeHost = await fake.start();
    unlisted = fakeRegistry(ca, zip, key);
    unlistedHost = await unlisted.start();

    // B: pulls through from A and from the fake registry, with A's token in a credentials file.
    const credentials = join(work, 'credentials.tfrc.json');
    writeFileSync(credentials, JSON.stringify({ credentials: { [hostA]: { token: tokenA } } }));
    serverB = await start('b', {
      TRELLIS_MIRROR_UPSTREAM: `${hostA},${fakeHost}`,
      TRELLIS_MIRROR_UPSTREAM_CREDENTIALS_FILE: credentials,
      NODE_EXTRA_CA_CERTS: ca.caFile,
      TRELLIS_LOG_LEVEL: 'info',
    });
    hostB = `localhost:${new URL(serverB.url).port}`;
    tokenB = await acmeToken(ca, `https://${hostB}`);
    terminal = new Terminal(tofu as string, ca);
  }, 180_000);

  afterAll(async () => {
    await serverB?.stop();
    await serverA?.stop();
    await fake?.stop();
    await unlisted?.stop();
    for (const database of databases) await database.drop();
    for (const dir of [work, ca?.dir, terminal?.home]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("lists A's versions and platforms on B's mirror, each with the zh: of A's signed SHA256SUMS", async () => {
    const index = await onB(mirrorPath(hostA, 'acme', 'index.json'));
    expect(index.status, JSON.stringify(index.body)).toBe(200);
    expect(index.body).toEqual({ versions: { '1.0.0': {} } });
    const version = await onB(mirrorPath(hostA, 'acme', '1.0.0.json'));
    expect(version.status, JSON.stringify(version.body)).toBe(200);
    expect(version.body.archives[`${OS}_${ARCH}`].hashes).toEqual([`zh:${sha256(zip)}`]);
    // Nothing is pulled until the archive's URL is fetched.
    expect((await onB('/api/registry/mirror-archives/acme')).body.archives).toEqual([]);
  });

  it('tofu init installs the provider of A through B, which keeps the archive as pulled', async () => {
    const result = await init();
    const output = `${result.stdout}\n${result.stderr}`;
    expect(result.code, output).toBe(0);
    expect(output).toContain(`Installed ${hostA}/acme/null v1.0.0`);
    const archives = (await onB('/api/registry/mirror-archives/acme')).body.archives;
    expect(archives).toEqual([
      expect.objectContaining({
        provider: `${hostA}/acme/null`,
        version: '1.0.0',
        platform: `${OS}_${ARCH}`,
        origin: 'pulled',
        size: zip.byteLength,
        hashes: [expect.stringMatching(/^h1:/), `zh:${sha256(zip)}`],
      }),
    ]);
    const listed = await command(
      process.execPath,
      [TRELLIS_BIN, 'mirror', 'list', '--namespace', 'acme', '--json', '--server', `https://${hostB}`],
      {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: work,
        XDG_CONFIG_HOME: join(work, 'config-b'),
        TRELLIS_TOKEN: tokenB,
        NODE_EXTRA_CA_CERTS: ca.caFile,
      },
    );
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout).map((archive: { origin: string }) => archive.origin)).toEqual(['pulled']);
    // The system pulled it, audited in acme's log; no token of A anywhere in it nor in B's log.
    const audit = await onB('/api/audit?action=registry.mirror.pull');
    expect(audit.status, JSON.stringify(audit.body)).toBe(200);
    expect(JSON.stringify(audit.body)).toContain('registry.mirror.pull');
    expect(JSON.stringify(audit.body)).not.toContain(tokenA);
    expect(serverB.output()).not.toContain(tokenA);
  });

  it('serves the pulled archive once A is gone: a second init in a fresh directory works', async () => {
    await serverA.stop();
    const index = await onB(mirrorPath(hostA, 'acme', 'index.json'));
    expect(index.body).toEqual({ versions: { '1.0.0': {} } });
    const version = await onB(mirrorPath(hostA, 'acme', '1.0.0.json'));
    expect(version.body.archives[`${OS}_${ARCH}`].hashes).toEqual([expect.stringMatching(/^h1:/), `zh:${sha256(zip)}`]);
    const result = await init();
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stdout).toContain(`Installed ${hostA}/acme/null v1.0.0`);
    expect(serverB.output()).toContain('the upstream registry failed');
  });

  it('refuses a bad signature, a wrong shasum and wrong bytes from an upstream, and stores nothing', async () => {
    const badSig = await onB(mirrorPath(fakeHost, 'badsig', '1.0.0.json'));
    expect(badSig.status).toBe(502);
    expect(badSig.body).toMatchObject({ code: 'mirror_upstream_signature_invalid' });
    const badSum = await onB(mirrorPath(fakeHost, 'badsum', '1.0.0.json'));
    expect(badSum.status).toBe(502);
    expect(badSum.body).toMatchObject({ code: 'mirror_upstream_shasum_mismatch' });

    const badZip = await onB(mirrorPath(fakeHost, 'badzip', '1.0.0.json'));
    expect(badZip.status, JSON.stringify(badZip.body)).toBe(200);
    const pulled = await caRequest(ca, badZip.body.archives[`${OS}_${ARCH}`].url);
    expect(pulled.status, pulled.text).toBe(502);
    // The signed routes answer errors as the Terraform Cloud protocol does (JSON:API `errors`).
    expect(JSON.parse(pulled.text).errors).toEqual([
      expect.objectContaining({ status: '502', code: 'mirror_upstream_shasum_mismatch' }),
    ]);

    const archives = (await onB('/api/registry/mirror-archives/acme')).body.archives;
    expect(archives.map((archive: { provider: string }) => archive.provider)).toEqual([`${hostA}/acme/null`]);
    // A forged pull URL is refused before anything is fetched.
    const forged = new URL(badZip.body.archives[`${OS}_${ARCH}`].url);
    forged.searchParams.set('signature', 'AAAA');
    const before = fake.requests.length;
    expect((await caRequest(ca, forged.toString())).status).toBe(401);
    expect(fake.requests.length).toBe(before);
  });

  it('answers 404 for a hostname not listed, and never contacts it', async () => {
    expect((await onB(mirrorPath(unlistedHost, 'acme', 'index.json'))).status).toBe(404);
    expect((await onB(mirrorPath(unlistedHost, 'acme', '1.0.0.json'))).status).toBe(404);
    expect(unlisted.requests).toEqual([]);
  });
});
