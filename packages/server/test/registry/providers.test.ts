import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { caRequest, requirePeer, runProcess, Terminal, type TestCa } from '@trellis/testkit';
import * as openpgp from 'openpgp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from '../support/dialects.js';
import { registryArtifactsAvailable } from '../support/registryArtifacts.js';
import { type RegistryServer, startRegistryServer } from '../support/registryServer.js';

const tofu = requirePeer('tofu', 'the stock tofu CLI installing a private provider');
const PROVIDER_BIN = requirePeer('terraform-provider-null', 'the stock tofu CLI installing a private provider');
const TRELLIS_BIN = fileURLToPath(new URL('../../../cli/dist/bin/trellis.js', import.meta.url));

/** A release directory as goreleaser writes it: the zip, SHA256SUMS and its detached signature. */
async function releaseDir(root: string, version: string, key: openpgp.PrivateKey, sign = true): Promise<string> {
  const dir = join(root, `dist-${version}`);
  mkdirSync(dir);
  const zip = `terraform-provider-null_${version}_linux_amd64.zip`;
  const staged = join(dir, `terraform-provider-null_v${version}`);
  writeFileSync(staged, readFileSync(PROVIDER_BIN as string), { mode: 0o755 });
  await command('zip', ['-j', '-q', join(dir, zip), staged]);
  rmSync(staged);
  const sha = createHash('sha256')
    .update(readFileSync(join(dir, zip)))
    .digest('hex');
  const shasums = `${sha}  ${zip}\n`;
  writeFileSync(join(dir, `terraform-provider-null_${version}_SHA256SUMS`), shasums);
  // A tampered signature: made by the right key, over other bytes.
  const signed = sign ? shasums : `${'0'.repeat(64)}  ${zip}\n`;
  const signature = await openpgp.sign({
    message: await openpgp.createMessage({ binary: Buffer.from(signed) }),
    signingKeys: key,
    detached: true,
    format: 'binary',
  });
  writeFileSync(join(dir, `terraform-provider-null_${version}_SHA256SUMS.sig`), signature as Uint8Array);
  return dir;
}

/** Runs a command to its end in `env` alone. */
const command = (file: string, args: string[], env: Record<string, string> = {}) =>
  runProcess(file, args, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env } });

describeEachDialect('private providers installed by the stock tofu over TLS', (dialect) => {
  const unavailable = !tofu || !PROVIDER_BIN || !registryArtifactsAvailable(dialect);
  describe.skipIf(unavailable)('against a real trellis-server', () => {
    let registry: RegistryServer;
    let ca: TestCa;
    let base: string;
    let host: string;
    let token: string;
    let work: string;
    let key: openpgp.PrivateKey;
    let keyId: string;
    let terminal: Terminal;

    const trellis = (args: string[]) =>
      command(process.execPath, [TRELLIS_BIN, ...args, '--server', base], {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: work,
        XDG_CONFIG_HOME: join(work, 'config'),
        TRELLIS_TOKEN: token,
        NODE_EXTRA_CA_CERTS: ca.caFile,
      });
    const api = async (path: string) => {
      const answer = await caRequest(ca, `${base}${path}`, { headers: { authorization: `Bearer ${token}` } });
      return { status: answer.status, body: answer.text === '' ? null : JSON.parse(answer.text) };
    };
    /** `tofu init` of a configuration that requires acme/null 1.0.0, with or without credentials. */
    const init = (credentials: boolean) => {
      const config = join(work, credentials ? 'with.tfrc' : 'without.tfrc');
      writeFileSync(config, credentials ? `credentials "${host}" {\n  token = "${token}"\n}\n` : '');
      const dir = terminal.dir({
        'main.tf': `terraform {\n  required_providers {\n    null = {\n      source  = "${host}/acme/null"\n      version = "1.0.0"\n    }\n  }\n}\n\nresource "null_resource" "a" {}\n`,
      });
      return terminal.run(dir, ['init', '-input=false', '-no-color'], { env: { TF_CLI_CONFIG_FILE: config } });
    };

    beforeAll(async () => {
      registry = await startRegistryServer(dialect);
      ({ ca, host, base, work } = registry);
      const org = await registry.asPerson('/api/orgs', { name: 'acme' });
      expect(org.status, org.text).toBe(201);
      const created = await registry.asPerson('/api/tokens', {
        name: 'registry',
        org_id: JSON.parse(org.text).id,
        role: 'admin',
      });
      expect(created.status, created.text).toBe(201);
      token = JSON.parse(created.text).token;
      const generated = await openpgp.generateKey({
        userIDs: [{ name: 'Acme Releases', email: 'releases@acme.test' }],
      });
      key = await openpgp.readPrivateKey({ armoredKey: generated.privateKey });
      keyId = key.getKeyID().toHex().toUpperCase();
      writeFileSync(join(work, 'key.asc'), generated.publicKey);
      terminal = new Terminal(tofu as string, ca);
    }, 120_000);

    afterAll(async () => {
      await registry?.stop();
      for (const dir of [terminal?.home]) if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('lists providers.v1 in service discovery', async () => {
      const answer = await caRequest(ca, `${base}/.well-known/terraform.json`);
      expect(JSON.parse(answer.text)['providers.v1']).toBe('/api/registry/v1/providers/');
    });

    it('publishes with the CLI once the key is added, and refuses a signature not over SHA256SUMS', async () => {
      const refusedBeforeKey = await trellis([
        'providers',
        'publish',
        await releaseDir(work, '0.9.0', key),
        '--namespace',
        'acme',
        '--type',
        'null',
        '--version',
        '0.9.0',
      ]);
      expect(refusedBeforeKey.code).not.toBe(0);
      expect(refusedBeforeKey.stderr).toContain('no GPG key');

      const added = await trellis(['gpg-keys', 'add', join(work, 'key.asc'), '--namespace', 'acme', '--json']);
      expect(added.code, added.stderr).toBe(0);
      expect(JSON.parse(added.stdout).key_id).toBe(keyId);

      const published = await trellis([
        'providers',
        'publish',
        await releaseDir(work, '1.0.0', key),
        '--namespace',
        'acme',
        '--type',
        'null',
        '--version',
        '1.0.0',
        '--json',
      ]);
      expect(published.code, published.stderr).toBe(0);
      expect(JSON.parse(published.stdout)).toMatchObject({
        version: '1.0.0',
        key_id: keyId,
        platforms: [{ os: 'linux', arch: 'amd64', uploaded: true }],
      });

      const tampered = await trellis([
        'providers',
        'publish',
        await releaseDir(work, '1.0.1', key, false),
        '--namespace',
        'acme',
        '--type',
        'null',
        '--version',
        '1.0.1',
      ]);
      expect(tampered.code).not.toBe(0);
      expect(tampered.stderr).toContain('signature of SHA256SUMS was not made by any GPG key');

      const list = await trellis(['providers', 'list', '--namespace', 'acme', '--json']);
      expect(JSON.parse(list.stdout).map((p: { type: string }) => p.type)).toEqual(['null']);
      const versions = await trellis(['providers', 'versions', '--namespace', 'acme', '--type', 'null', '--json']);
      expect(JSON.parse(versions.stdout).map((v: { version: string }) => v.version)).toEqual(['1.0.0']);
      const protocol = await api('/api/registry/v1/providers/acme/null/versions');
      expect(protocol.body).toEqual({
        versions: [{ version: '1.0.0', protocols: ['5.0'], platforms: [{ os: 'linux', arch: 'amd64' }] }],
      });
    });

    it('tofu init installs the provider with its signature checked; without a token it is refused', async () => {
      const result = await init(true);
      const output = `${result.stdout}\n${result.stderr}`;
      expect(result.code, output).toBe(0);
      expect(output).toMatch(new RegExp(`Installed ${host}/acme/null v1\\.0\\.0 \\(.*key ID ${keyId}\\)`));

      const refused = await init(false);
      expect(refused.code).not.toBe(0);
    });

    it('answers the download with short-lived signed URLs that need no token, and the namespace keys', async () => {
      const { status, body } = await api('/api/registry/v1/providers/acme/null/1.0.0/download/linux/amd64');
      expect(status).toBe(200);
      expect(body.signing_keys.gpg_public_keys).toEqual([expect.objectContaining({ key_id: keyId })]);
      const shasums = await caRequest(ca, body.shasums_url);
      expect(shasums.status).toBe(200);
      expect(shasums.text).toContain(body.shasum);
      const forged = new URL(body.shasums_url);
      forged.searchParams.set('signature', 'AAAA');
      expect((await caRequest(ca, forged.toString())).status).toBe(401);
    });

    it('an admin deletes a version: the CLI and tofu no longer see it', async () => {
      const deleted = await trellis([
        'providers',
        'delete',
        '--namespace',
        'acme',
        '--type',
        'null',
        '--version',
        '1.0.0',
      ]);
      expect(deleted.code, deleted.stderr).toBe(0);
      expect((await api('/api/registry/v1/providers/acme/null/versions')).body).toEqual({ versions: [] });
      const keys = await trellis(['gpg-keys', 'list', '--namespace', 'acme', '--json']);
      expect(JSON.parse(keys.stdout)).toEqual([expect.objectContaining({ key_id: keyId })]);
    });
  });
});
