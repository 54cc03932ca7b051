/**
 * Modules published from git tags (issue 28), end to end on a real control plane: an admin
 * connects a module to a repository through the API, the provider delivers a recorded tag push
 * (`test-fixtures/vcs/*\/push-tag.json`) to the same webhook endpoint as git-driven runs, and the
 * tagged commit's archive (nock, as the provider's archive API answers) becomes the published
 * version, with its tree at the root; the registry reads its inputs, outputs and README back,
 * and the stock `tofu init` (over TLS with a throw-away CA) downloads it into a configuration.
 */
import { createHmac } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { coreServices, type GitProvider, personalNamespace, sealProviderTokens, systemScope } from '@trellis/core';
import { caFetch, makeTestCa, requirePeer, Terminal, type TestCa, tarGz } from '@trellis/testkit';
import nock from 'nock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { resolve } from '../../src/container.js';
import { type RunningControlPlane, startControlPlane } from '../support/controlPlane.js';
import { describeEachDialect } from '../support/dialects.js';

const FIXTURES = new URL('../../../../test-fixtures/vcs/', import.meta.url);
const EMAIL = 'platform-admin@example.test';
const PROVIDER_TOKEN = 'provider-access-token-7d1c';
const tofu = requirePeer('tofu', 'tofu init of a module published from a git tag');

const VARIABLES_TF = `variable "cidr_block" {
  description = "The VPC's CIDR block"
  type        = string
  default     = "10.0.0.0/16"
}

variable "name" {
  type = string
}
`;
// biome-ignore lint/suspicious/noTemplateCurlyInString: an HCL interpolation, as a module has it
const OUTPUTS_TF = 'output "vpc_id" {\n  description = "The id of the VPC"\n  value       = "vpc-${var.name}"\n}\n';

interface ProviderCase {
  provider: GitProvider;
  repository: string;
  event: string;
  /** The tag and commit of the recorded tag push. */
  tag: string;
  commit: string;
  headers(event: string, id: string, body: Buffer, secret: string): Record<string, string>;
  /** The provider's archive API answering the commit's tarball. */
  archive(bytes: Buffer): nock.Scope;
}

const hmac = (body: Buffer, secret: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

const CASES: ProviderCase[] = [
  {
    provider: 'github',
    repository: 'acme-platform/infra-live',
    event: 'push',
    tag: 'v1.4.0',
    commit: '8457785ada4ab6182c16fbac60586081edf51999',
    headers: (event, id, body, secret) => ({
      'x-github-event': event,
      'x-github-delivery': id,
      'x-hub-signature-256': hmac(body, secret),
    }),
    archive: (bytes) =>
      nock('https://api.github.com', { reqheaders: { authorization: `Bearer ${PROVIDER_TOKEN}` } })
        .get('/repos/acme-platform/infra-live/tarball/8457785ada4ab6182c16fbac60586081edf51999')
        .reply(200, bytes, { 'Content-Type': 'application/x-gzip' }),
  },
  {
    provider: 'gitlab',
    repository: 'acme/platform/infra-live',
    event: 'Tag Push Hook',
    tag: 'v2.0.0',
    commit: 'e544cde93a077a14b1a2075ef74ea5416f7b8581',
    headers: (event, id, _body, secret) => ({
      'x-gitlab-event': event,
      'x-gitlab-event-uuid': id,
      'x-gitlab-token': secret,
    }),
    archive: (bytes) =>
      nock('https://gitlab.com')
        .get('/api/v4/projects/acme%2Fplatform%2Finfra-live/repository/archive.tar.gz')
        .query({ sha: 'e544cde93a077a14b1a2075ef74ea5416f7b8581' })
        .reply(200, bytes, { 'Content-Type': 'application/x-gzip' }),
  },
];

describeEachDialect('modules published from git tags', (dialect) => {
  let plane: RunningControlPlane;
  let ca: TestCa;
  /** `fetch` trusting the test CA (the control plane serves TLS, as `tofu` needs). */
  let request: typeof fetch;
  let token: string;
  let userId: string;
  let namespace: string;

  beforeAll(async () => {
    ca = makeTestCa();
    request = caFetch(ca);
    plane = await startControlPlane(dialect, {
      env: {
        TRELLIS_TLS_CERT_FILE: ca.certFile,
        TRELLIS_TLS_KEY_FILE: ca.keyFile,
        TRELLIS_GITHUB_CLIENT_ID: 'gh-client',
        TRELLIS_GITHUB_CLIENT_SECRET: 'gh-secret',
        TRELLIS_GITLAB_CLIENT_ID: 'gl-client',
        TRELLIS_GITLAB_CLIENT_SECRET: 'gl-secret',
      },
    });
    token = await plane.accessToken(EMAIL);
    userId = (await plane.controlPlane.useCases.auth.ensureUser({ email: EMAIL })).id;
    namespace = personalNamespace(userId);
    const secrets = resolve(plane.controlPlane.container, coreServices.secretBox);
    const uow = resolve(plane.controlPlane.container, coreServices.unitOfWork);
    for (const provider of ['github', 'gitlab'] as const) {
      const identity = { provider, provider_user_id: `${provider}-4411021` };
      const sealed = await sealProviderTokens(secrets, identity, {
        accessToken: PROVIDER_TOKEN,
        refreshToken: null,
        expiresAt: null,
      });
      await uow.run(systemScope, (stores) =>
        stores.identities.upsert({ user_id: userId, ...identity, provider_token: sealed, scopes: 'repo' }),
      );
    }
    nock.disableNetConnect();
    nock.enableNetConnect(/^(127\.0\.0\.1|localhost)(:\d+)?$/);
  });
  afterEach(() => {
    nock.cleanAll();
  });
  afterAll(async () => {
    nock.enableNetConnect();
    await plane?.close();
    if (ca) rmSync(ca.dir, { recursive: true, force: true });
  });

  const api = (path: string, init: RequestInit = {}) =>
    request(`${plane.url}${path}`, {
      ...init,
      headers: {
        authorization: `Bearer ${token}`,
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...init.headers,
      },
    });

  it('refuses a connection to an unknown provider or a malformed repository, as a problem', async () => {
    const answer = await api(`/api/registry/module-repositories/${namespace}/vpc/aws`, {
      method: 'PUT',
      body: JSON.stringify({ provider: 'github', repository: 'no-slash', webhook: 'manual' }),
    });
    expect(answer.status).toBe(400);
    expect(answer.headers.get('content-type')).toContain('application/problem+json');
    expect(await answer.json()).toMatchObject({ code: 'validation_failed' });
    const missing = await api(`/api/registry/module-repositories/${namespace}/vpc/aws`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: 'module_repository_not_found' });
  });

  for (const c of CASES) {
    describe(c.provider, () => {
      const name = `net-${c.provider}`;
      let webhookUrl: string;
      let secret: string;

      beforeAll(async () => {
        const answer = await api(`/api/registry/module-repositories/${namespace}/${name}/aws`, {
          method: 'PUT',
          body: JSON.stringify({ provider: c.provider, repository: c.repository, webhook: 'manual' }),
        });
        expect(answer.status).toBe(200);
        const connection = (await answer.json()) as { webhook_url: string; webhook_secret: string; id: string };
        expect(connection.webhook_url).toMatch(new RegExp(`/api/webhooks/${c.provider}\\?module=${connection.id}$`));
        webhookUrl = connection.webhook_url.replace(/^https?:\/\/[^/]+/, plane.url);
        secret = connection.webhook_secret;
      });

      const deliver = (body: Buffer, id: string, signWith = secret) =>
        request(webhookUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...c.headers(c.event, id, body, signWith) },
          body,
        });

      it('a wrongly signed tag push publishes nothing: 401', async () => {
        const body = readFileSync(new URL(`${c.provider}/push-tag.json`, FIXTURES));
        const answer = await deliver(body, `${c.provider}-forged`, 'not-the-secret');
        expect(answer.status).toBe(401);
        expect(await answer.json()).toMatchObject({ code: 'webhook_signature_invalid' });
      });

      it("a version tag publishes the tagged commit's tree; its redelivery publishes nothing more", async () => {
        const top = `${c.repository.replaceAll('/', '-')}-${c.commit.slice(0, 7)}`;
        const archive = c.archive(
          tarGz([
            { path: `${top}/`, type: 'directory' },
            { path: `${top}/variables.tf`, content: VARIABLES_TF },
            { path: `${top}/outputs.tf`, content: OUTPUTS_TF },
            { path: `${top}/README.md`, content: `# ${name}\n\nA network.\n` },
          ]),
        );
        const body = readFileSync(new URL(`${c.provider}/push-tag.json`, FIXTURES));
        const answer = await deliver(body, `${c.provider}-tag-once`);
        expect(answer.status).toBe(202);
        const version = c.tag.slice(1);
        expect(await answer.json()).toMatchObject({
          accepted: true,
          jobs: [],
          module_tag: { tag: c.tag, commit_sha: c.commit, outcome: 'published', version, message: null },
        });
        expect(archive.isDone()).toBe(true);

        const versions = await api(`/api/registry/modules/${namespace}/${name}/aws/versions`);
        expect(((await versions.json()) as { versions: { version: string }[] }).versions.map((v) => v.version)).toEqual(
          [version],
        );
        const actor = { userId, email: EMAIL };
        const docs = await plane.controlPlane.useCases.moduleDocs.describe(actor, {
          namespace,
          name,
          system: 'aws',
          version,
        });
        expect(docs.inputs.map((input) => [input.name, input.required])).toEqual([
          ['cidr_block', false],
          ['name', true],
        ]);
        expect(docs.outputs).toEqual([{ name: 'vpc_id', description: 'The id of the VPC', sensitive: false }]);
        expect(docs.readme).toBe(`# ${name}\n\nA network.\n`);

        // The same delivery again (a provider's redelivery): nothing fetched, nothing published.
        const again = await deliver(body, `${c.provider}-tag-once`);
        expect(again.status).toBe(202);
        expect(await again.json()).toMatchObject({ module_tag: null });

        const connection = await api(`/api/registry/module-repositories/${namespace}/${name}/aws`);
        expect(await connection.json()).toMatchObject({
          repository: c.repository,
          status: 'connected',
          last_tag: { tag: c.tag, outcome: 'published', version },
        });
        const audit = await api(`/api/audit?action=module_repository.tag`);
        const entries = ((await audit.json()) as { entries: { details: Record<string, unknown> }[] }).entries;
        expect(entries.some((entry) => entry.details.tag === c.tag && entry.details.outcome === 'published')).toBe(
          true,
        );
      });

      it.skipIf(!tofu)('tofu init downloads the version the tag published', async () => {
        const terminal = new Terminal(tofu as string, ca);
        try {
          // A registry host needs a dot: the loopback address (the test certificate names it too).
          const host = `127.0.0.1:${new URL(plane.url).port}`;
          const cliConfig = join(terminal.home, 'credentials.tfrc');
          writeFileSync(cliConfig, `credentials "${host}" {\n  token = "${token}"\n}\n`);
          const dir = terminal.dir({
            'main.tf': `module "network" {\n  source  = "${host}/${namespace}/${name}/aws"\n  version = "${c.tag.slice(1)}"\n  name    = "edge"\n}\n`,
          });
          const init = await terminal.run(dir, ['init', '-input=false', '-no-color'], {
            env: { TF_CLI_CONFIG_FILE: cliConfig },
          });
          expect(init.code, `${init.stdout}\n${init.stderr}`).toBe(0);
          expect(init.stdout).toContain(`Downloading ${host}/${namespace}/${name}/aws ${c.tag.slice(1)}`);
          // The tagged commit's tree is the module's root, as tofu expects it.
          expect(existsSync(join(dir, '.terraform', 'modules', 'network', 'variables.tf'))).toBe(true);
        } finally {
          rmSync(terminal.home, { recursive: true, force: true });
        }
      });

      it('a tag that is not a version publishes nothing, and says so', async () => {
        const fixture = JSON.parse(readFileSync(new URL(`${c.provider}/push-tag.json`, FIXTURES), 'utf8'));
        fixture.ref = 'refs/tags/nightly';
        const answer = await deliver(Buffer.from(JSON.stringify(fixture)), `${c.provider}-nightly`);
        expect(answer.status).toBe(202);
        expect(await answer.json()).toMatchObject({
          module_tag: { tag: 'nightly', outcome: 'ignored', version: null },
        });
      });
    });
  }

  it('disconnecting keeps the published versions', async () => {
    const gone = await api(`/api/registry/module-repositories/${namespace}/net-github/aws`, { method: 'DELETE' });
    expect(gone.status).toBe(204);
    expect((await api(`/api/registry/module-repositories/${namespace}/net-github/aws`)).status).toBe(404);
    const versions = await api(`/api/registry/modules/${namespace}/net-github/aws/versions`);
    expect(versions.status).toBe(200);
  });
});
