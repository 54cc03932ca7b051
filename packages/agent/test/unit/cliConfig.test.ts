import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jobCliConfig, withCliConfig } from '../../src/job/cliConfig.js';

const REGISTRY = {
  token: 'trr_job-token',
  namespace: 'acme',
  mirror_providers: ['registry.opentofu.org/hashicorp/null', 'registry.opentofu.org/hashicorp/random'],
};
const dir = mkdtempSync(join(tmpdir(), 'trellis-cli-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("a job's CLI configuration (issue 28)", () => {
  it("takes the mirrored providers from the owner's mirror, the rest directly, with the job token for the control plane", () => {
    const config = jobCliConfig('https://Trellis.Example.com:8443/', REGISTRY, 'auto');
    const providers = '["registry.opentofu.org/hashicorp/null", "registry.opentofu.org/hashicorp/random"]';
    expect(config.mirrorUrl).toBe('https://trellis.example.com:8443/api/registry/mirror/acme/');
    expect(config.text).toBe(
      `provider_installation {\n  network_mirror {\n    url     = "https://trellis.example.com:8443/api/registry/mirror/acme/"\n    include = ${providers}\n  }\n  direct {\n    exclude = ${providers}\n  }\n}\n` +
        'credentials "trellis.example.com:8443" {\n  token = "trr_job-token"\n}\n',
    );
    // A control plane under a path prefix keeps it.
    expect(jobCliConfig('https://example.com/trellis', REGISTRY, 'auto').mirrorUrl).toBe(
      'https://example.com/trellis/api/registry/mirror/acme/',
    );
  });

  it('leaves the mirror out when the agent is told to, the mirror is empty, or the control plane is plain HTTP', () => {
    const off = jobCliConfig('https://example.com', REGISTRY, 'off');
    const empty = jobCliConfig('https://example.com', { ...REGISTRY, mirror_providers: [] }, 'auto');
    const http = jobCliConfig('http://example.com', REGISTRY, 'auto');
    for (const config of [off, empty, http]) {
      expect(config.mirrorUrl).toBeNull();
      expect(config.text).not.toContain('provider_installation');
      expect(config.text).toContain('token = "trr_job-token"');
    }
    expect(off.skipped).toContain('TRELLIS_AGENT_PROVIDER_MIRROR=off');
    expect(http.skipped).toContain('https');
  });

  it("keeps the host's own CLI configuration first, and leaves the mirror out when it installs providers itself", () => {
    const cache = 'plugin_cache_dir = "/var/cache/tofu"\n';
    const kept = jobCliConfig('https://example.com', REGISTRY, 'auto', cache);
    expect(kept.text.startsWith(`${cache}\nprovider_installation {`)).toBe(true);
    const own = 'provider_installation {\n  filesystem_mirror {\n    path = "/opt/providers"\n  }\n}\n';
    const theirs = jobCliConfig('https://example.com', REGISTRY, 'auto', own);
    expect(theirs.mirrorUrl).toBeNull();
    expect(theirs.skipped).toContain("host's CLI configuration");
    expect(theirs.text).toBe(`${own}\ncredentials "example.com" {\n  token = "trr_job-token"\n}\n`);
  });

  it('is written owner-only and named by TF_CLI_CONFIG_FILE only', () => {
    const file = join(dir, 'tofu.tfrc');
    const env = withCliConfig({ PATH: '/bin' }, file, jobCliConfig('https://example.com', REGISTRY, 'auto'));
    expect(env).toEqual({ PATH: '/bin', TF_CLI_CONFIG_FILE: file });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toContain('credentials "example.com"');
  });
});
