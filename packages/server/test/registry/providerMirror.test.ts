import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  caRequest,
  mirrorCliConfig,
  NULL_PROVIDER_CONFIG,
  type ProviderMirrorDir,
  requirePeer,
  Terminal,
  type TestCa,
  testProviderBinary,
  writeProviderMirrorDir,
} from '@trellis/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from '../support/dialects.js';
import { registryArtifactsAvailable } from '../support/registryArtifacts.js';
import { type RegistryServer, startRegistryServer } from '../support/registryServer.js';

const tofu = requirePeer('tofu', 'the provider network mirror served to the stock tofu CLI');
const provider = testProviderBinary();

describeEachDialect('the provider network mirror, to the stock tofu CLI over TLS', (dialect) => {
  describe.skipIf(!tofu || !provider || !registryArtifactsAvailable(dialect))('with its artifact store', () => {
    let registry: RegistryServer;
    let ca: TestCa;
    let base: string;
    let host: string;
    let token: string;
    let mirror: ProviderMirrorDir;
    let terminal: Terminal;
    const dirs: string[] = [];

    const api = (
      path: string,
      options: { method?: string; body?: Buffer | string; type?: string; bearer?: string } = {},
    ) =>
      caRequest(ca, `${base}${path}`, {
        method: options.method ?? 'GET',
        headers: {
          ...(options.bearer === '' ? {} : { authorization: `Bearer ${options.bearer ?? token}` }),
          ...(options.type ? { 'content-type': options.type } : {}),
        },
        ...(options.body === undefined ? {} : { body: options.body }),
      });
    const pushPath = `/api/registry/mirror-archives/acme/registry.opentofu.org/hashicorp/null/3.2.4/`;

    beforeAll(async () => {
      registry = await startRegistryServer(dialect);
      ({ ca, host, base } = registry);
      mirror = writeProviderMirrorDir(provider as string);
      dirs.push(mirror.dir);
      const { asPerson } = registry;
      const org = await asPerson('/api/orgs', { name: 'acme' });
      expect(org.status, org.text).toBe(201);
      const created = await asPerson('/api/tokens', { name: 'mirror' });
      expect(created.status, created.text).toBe(201);
      token = JSON.parse(created.text).token;
      terminal = new Terminal(tofu as string, ca);
      dirs.push(terminal.home);
    }, 120_000);

    afterAll(async () => {
      await registry?.stop();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    });

    it('takes a pushed archive once, computes its hashes, and refuses other bytes at its address', async () => {
      const zip = readFileSync(join(mirror.dir, mirror.zip));
      const pushed = await api(`${pushPath}${mirror.platform}`, { method: 'PUT', body: zip, type: 'application/zip' });
      expect(pushed.status, pushed.text).toBe(201);
      const archive = JSON.parse(pushed.text);
      expect(archive).toMatchObject({
        provider: 'registry.opentofu.org/hashicorp/null',
        version: '3.2.4',
        platform: mirror.platform,
        size: zip.byteLength,
      });
      expect(archive.hashes).toEqual([expect.stringMatching(/^h1:[A-Za-z0-9+/]{43}=$/), mirror.zh]);
      const again = await api(`${pushPath}${mirror.platform}`, { method: 'PUT', body: zip, type: 'application/zip' });
      expect(again.status).toBe(200);
      const other = Buffer.concat([zip, Buffer.from('trailing bytes')]);
      const refused = await api(`${pushPath}${mirror.platform}`, {
        method: 'PUT',
        body: other,
        type: 'application/zip',
      });
      expect(refused.status).toBe(409);
      expect(JSON.parse(refused.text).code).toBe('mirror_archive_exists');
      const notZip = await api(`${pushPath}windows_amd64`, { method: 'PUT', body: 'hello', type: 'application/zip' });
      expect(notZip.status).toBe(422);
      expect(JSON.parse(notZip.text).code).toBe('mirror_archive_invalid');
      const list = await api('/api/registry/mirror-archives/acme');
      expect(JSON.parse(list.text).archives.map((a: { id: string }) => a.id)).toEqual([archive.id]);
      // Another namespace than one's own is not found, whoever asks.
      expect((await api('/api/registry/mirror-archives/someone-else')).status).toBe(404);
    });

    it('serves the mirror protocol: versions, archives by signed URL, nothing without a token', async () => {
      const index = await api('/api/registry/mirror/acme/registry.opentofu.org/hashicorp/null/index.json');
      expect(index.status, index.text).toBe(200);
      expect(JSON.parse(index.text)).toEqual({ versions: { '3.2.4': {} } });
      const version = JSON.parse(
        (await api('/api/registry/mirror/acme/registry.opentofu.org/hashicorp/null/3.2.4.json')).text,
      );
      const entry = version.archives[mirror.platform];
      expect(entry.hashes[1]).toBe(mirror.zh);
      const download = await caRequest(ca, entry.url);
      expect(download.status).toBe(200);
      expect(download.headers.etag).toBe(`"${mirror.zh.slice(3)}"`);
      expect((await caRequest(ca, entry.url.replace(/signature=[^&]+/, 'signature=forged'))).status).toBe(401);
      const anonymous = await api('/api/registry/mirror/acme/registry.opentofu.org/hashicorp/null/index.json', {
        bearer: '',
      });
      expect(anonymous.status).toBe(401);
      expect((await api('/api/registry/mirror/acme/registry.opentofu.org/hashicorp/random/index.json')).status).toBe(
        404,
      );
    });

    it('is what tofu init installs hashicorp/null from, with no other network, and its h1: is the one tofu computes', async () => {
      const url = `${base}/api/registry/mirror/acme/`;
      const cliConfig = join(terminal.home, 'mirror.tfrc');
      writeFileSync(cliConfig, mirrorCliConfig(url, host, token));
      const work = terminal.dir({ 'main.tf': NULL_PROVIDER_CONFIG });
      // Any other host is unreachable: a proxy that answers nothing, except for this server.
      const offline = { TF_CLI_CONFIG_FILE: cliConfig, HTTPS_PROXY: 'http://127.0.0.1:9', NO_PROXY: 'localhost' };
      const init = await terminal.run(work, ['init', '-input=false'], { env: offline });
      expect(init.code, `${init.stdout}\n${init.stderr}`).toBe(0);
      expect(init.stdout).toContain('Installed hashicorp/null v3.2.4');
      const lock = readFileSync(join(work, '.terraform.lock.hcl'), 'utf8');
      const archives = JSON.parse((await api('/api/registry/mirror-archives/acme')).text).archives;
      // tofu adds the h1: it computes of what it installed: the only h1: is the mirror's, so they agree.
      expect(lock.match(/"h1:[^"]+"/g)).toEqual([`"${archives[0].hashes[0]}"`]);
      const apply = await terminal.run(work, ['apply', '-auto-approve', '-input=false'], { env: offline });
      expect(apply.code, `${apply.stdout}\n${apply.stderr}`).toBe(0);

      // Without credentials the mirror refuses, and so does init.
      writeFileSync(cliConfig, mirrorCliConfig(url, host, null));
      const refused = await terminal.run(terminal.dir({ 'main.tf': NULL_PROVIDER_CONFIG }), ['init', '-input=false'], {
        env: offline,
      });
      expect(refused.code).not.toBe(0);
    });
  });
});
