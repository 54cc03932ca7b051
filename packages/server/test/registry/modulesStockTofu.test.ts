/**
 * The module registry (issue 28) with the stock `tofu` over TLS against a real control plane: a
 * module published by upload is found through service discovery (`modules.v1`) and downloaded by
 * `tofu init` through the signed URL of `X-Terraform-Get`; a version constraint picks the right
 * version among several; a person outside the namespace is refused. On SQLite with the
 * filesystem, and on Postgres with S3 (MinIO). The registry's own API (publish once, problems)
 * is checked over the same server.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TrellisApiError, TrellisClient } from '@trellis/client';
import {
  caFetch,
  caRequest,
  checkTestPostgres,
  describeWithPostgres,
  type ObjectStorageServer,
  requirePeer,
  startMinio,
  Terminal,
  type TestCa,
  type TestDialect,
  makeTestCa,
  tarGz,
} from '@trellis/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningControlPlane, startControlPlane } from '../support/controlPlane.js';

const tofu = requirePeer('tofu', 'the module registry with the stock tofu CLI');
const minio = requirePeer('minio', 'the module registry on S3 (MinIO)');
const postgres = await checkTestPostgres();

/** A module whose one output says which version it is. */
function moduleTarball(version: string): Buffer {
  return tarGz([
    {
      path: 'main.tf',
      content: `variable "cidr" {\n  default = "10.0.0.0/16"\n}\noutput "version" {\n  value = "${version}"\n}\n`,
    },
    { path: 'README.md', content: `# vpc ${version}\n` },
  ]);
}

async function problemOf(promise: Promise<unknown>): Promise<TrellisApiError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof TrellisApiError) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
}

function registrySuite(dialect: TestDialect, storage: 'filesystem' | 's3'): void {
  describe.skipIf(!tofu || (storage === 's3' && !minio))(`on ${dialect} with the ${storage} artifact store`, () => {
    let ca: TestCa;
    let objects: ObjectStorageServer | undefined;
    let plane: RunningControlPlane;
    let terminal: Terminal;
    let host: string;
    let base: string;
    let ada: TrellisClient;
    let adaToken: string;
    let malloryToken: string;

    /** A CLI configuration that gives tofu `token` for this server (what `tofu login` would store). */
    const cliConfig = (name: string, token: string) => {
      const file = join(terminal.home, `${name}.tfrc`);
      writeFileSync(file, `credentials "${host}" {\n  token = "${token}"\n}\n`);
      return file;
    };
    const init = async (name: string, token: string, constraint: string) => {
      const dir = terminal.dir({
        'main.tf': `module "vpc" {\n  source  = "${host}/acme/vpc/aws"\n  version = "${constraint}"\n}\n\noutput "picked" {\n  value = module.vpc.version\n}\n`,
      });
      const result = await terminal.run(dir, ['init', '-input=false', '-no-color'], {
        env: { TF_CLI_CONFIG_FILE: cliConfig(name, token) },
      });
      return { ...result, dir, output: `${result.stdout}\n${result.stderr}` };
    };

    beforeAll(async () => {
      ca = makeTestCa();
      let env: Record<string, string> = {};
      if (storage === 's3') {
        objects = await startMinio(minio as string);
        env = objects.artifactsEnv(await objects.createBucket(), 'trellis');
      }
      plane = await startControlPlane(dialect, {
        env: { ...env, TRELLIS_TLS_CERT_FILE: ca.certFile, TRELLIS_TLS_KEY_FILE: ca.keyFile },
      });
      expect(plane.url.startsWith('https://')).toBe(true);
      // A registry host needs a dot: the loopback address (the test certificate names it too).
      host = `127.0.0.1:${new URL(plane.url).port}`;
      base = `https://${host}`;
      adaToken = await plane.accessToken('ada@example.com');
      malloryToken = await plane.accessToken('mallory@example.com');
      ada = new TrellisClient({
        baseUrl: base,
        auth: { kind: 'bearer', accessToken: () => adaToken },
        fetch: caFetch(ca),
      });
      await ada.createOrg('acme');
      terminal = new Terminal(tofu as string, ca);
      for (const version of ['1.2.0', '1.3.0', '1.2.1', '2.0.0']) {
        const tarball = moduleTarball(version);
        await ada.publishModule({ namespace: 'acme', name: 'vpc', system: 'aws', version }, tarball, tarball.length);
      }
    }, 120_000);

    afterAll(async () => {
      await plane?.close();
      await objects?.stop();
      if (terminal) rmSync(terminal.home, { recursive: true, force: true });
      if (ca) rmSync(ca.dir, { recursive: true, force: true });
    });

    it('tofu init downloads the version a constraint picks among several, through discovery and a signed URL', async () => {
      const discovery = JSON.parse((await caRequest(ca, `${base}/.well-known/terraform.json`)).text);
      expect(discovery['modules.v1']).toBe('/api/registry/v1/modules/');

      const result = await init('ada', adaToken, '~> 1.2.0');
      expect(result.code, result.output).toBe(0);
      expect(result.output).toContain(`Downloading ${host}/acme/vpc/aws 1.2.1`);
      const installed = JSON.parse(readFileSync(join(result.dir, '.terraform', 'modules', 'modules.json'), 'utf8'));
      expect(installed.Modules).toContainEqual(
        expect.objectContaining({ Key: 'vpc', Source: `${host}/acme/vpc/aws`, Version: '1.2.1' }),
      );
      expect(readFileSync(join(result.dir, '.terraform', 'modules', 'vpc', 'main.tf'), 'utf8')).toContain(
        'value = "1.2.1"',
      );
    });

    it('refuses the init of a person outside the namespace, naming the module it could not find', async () => {
      const result = await init('mallory', malloryToken, '~> 1.2');
      expect(result.code).not.toBe(0);
      expect(result.output).toContain('Error: Module not found');
      expect(result.output.replace(/\s+/g, ' ')).toContain(
        `Module acme/vpc/aws ("vpc" from main.tf:1) cannot be found in the module registry at ${host}`,
      );
      expect(result.output).not.toContain('Downloading');
    });

    it('hands out a signed, short-lived tarball URL that works without a token and only as signed', async () => {
      const answer = await caRequest(ca, `${base}/api/registry/v1/modules/acme/vpc/aws/2.0.0/download`, {
        headers: { authorization: `Bearer ${adaToken}` },
      });
      expect(answer.status).toBe(204);
      const url = answer.headers['x-terraform-get'] as string;
      expect(url).toMatch(
        new RegExp(`^${base}/_signed/registry/modules/[0-9a-f-]{36}/[0-9a-f-]{36}\\.tar\\.gz\\?token=.+&signature=.+$`),
      );
      const tarball = await caFetch(ca)(url);
      expect(tarball.status).toBe(200);
      expect(Buffer.from(await tarball.arrayBuffer()).equals(moduleTarball('2.0.0'))).toBe(true);
      const tampered = url.replace(/signature=[^&]+/, 'signature=AAAA');
      expect((await caFetch(ca)(tampered)).status).toBe(401);

      const versions = await caRequest(ca, `${base}/api/registry/v1/modules/acme/vpc/aws/versions`, {
        headers: { authorization: `Bearer ${adaToken}` },
      });
      expect(JSON.parse(versions.text).modules[0].versions.map((v: { version: string }) => v.version)).toEqual([
        '2.0.0',
        '1.3.0',
        '1.2.1',
        '1.2.0',
      ]);
      const anonymous = await caRequest(ca, `${base}/api/registry/v1/modules/acme/vpc/aws/versions`);
      expect(anonymous.status).toBe(401);
    });

    it('publishes a version once (409 module_version_exists), refuses a bad tarball, and pages the modules', async () => {
      const again = await problemOf(
        ada.publishModule({ namespace: 'acme', name: 'vpc', system: 'aws', version: '1.2.0' }, moduleTarball('x')),
      );
      expect([again.status, again.code]).toEqual([409, 'module_version_exists']);
      const invalid = await problemOf(
        ada.publishModule(
          { namespace: 'acme', name: 'vpc', system: 'aws', version: '3.0.0' },
          tarGz([{ path: '../outside.tf', content: '' }]),
        ),
      );
      expect([invalid.status, invalid.code]).toEqual([422, 'module_invalid']);
      const badVersion = await problemOf(
        ada.publishModule({ namespace: 'acme', name: 'vpc', system: 'aws', version: 'v3' }, moduleTarball('x')),
      );
      expect([badVersion.status, badVersion.code]).toEqual([400, 'validation_failed']);
      const json = await caRequest(ca, `${base}/api/registry/modules/acme/vpc/aws/3.0.0`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adaToken}`, 'content-type': 'application/json' },
        body: '{}',
      });
      expect([json.status, JSON.parse(json.text).code]).toEqual([415, 'unsupported_media_type']);

      await ada.publishModule(
        { namespace: 'acme', name: 'dns', system: 'aws', version: '0.1.0' },
        moduleTarball('0.1.0'),
      );
      const first = await ada.listModulesPage('acme', { limit: 1 });
      expect(first.items.map((module) => module.name)).toEqual(['dns']);
      const second = await ada.listModulesPage('acme', { limit: 1, cursor: first.next_cursor ?? '' });
      expect(second.items.map((module) => [module.name, module.latest_version])).toEqual([['vpc', '2.0.0']]);
      expect(second.next_cursor).toBe(null);
    });
  });
}

describe('the module registry with the stock tofu CLI over TLS', () => {
  registrySuite('sqlite', 'filesystem');
  describeWithPostgres('on Postgres', postgres, () => registrySuite('postgres', 's3'));
});
