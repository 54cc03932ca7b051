import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pluginCacheDir, withPluginCache } from '../../src/job/pluginCache.js';

const root = mkdtempSync(join(tmpdir(), 'trellis-plugin-cache-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const ONE_AT_A_TIME = { concurrency: 1, hostCliConfig: '' };

describe("the engine's provider cache", () => {
  it('is a directory of the work dir by default, owner-only, that the engine may use before the lock file has every hash', () => {
    const dir = pluginCacheDir('auto', `${root}/`) as string;
    expect(dir).toBe(join(root, 'plugin-cache'));
    const choice = withPluginCache({ PATH: '/usr/bin' }, dir, '/usr/bin/tofu', ONE_AT_A_TIME);
    expect(choice.env).toEqual({
      PATH: '/usr/bin',
      TF_PLUGIN_CACHE_DIR: dir,
      TF_PLUGIN_CACHE_MAY_BREAK_DEPENDENCY_LOCK_FILE: 'true',
    });
    expect(choice.note).toBe(`providers: cached in ${dir} for this agent's jobs`);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(pluginCacheDir({ dir: '/srv/cache' }, root)).toBe('/srv/cache');
    expect(pluginCacheDir('off', root)).toBeNull();
  });

  it("leaves the host's own cache alone, in its environment or its CLI configuration", () => {
    const hostEnv = { TF_PLUGIN_CACHE_DIR: '/home/ci/.terraform.d/plugin-cache' };
    expect(withPluginCache(hostEnv, join(root, 'a'), 'tofu', ONE_AT_A_TIME)).toEqual({
      env: hostEnv,
      note: "providers: the host's cache /home/ci/.terraform.d/plugin-cache",
    });
    const configured = withPluginCache({}, join(root, 'b'), 'tofu', {
      concurrency: 1,
      hostCliConfig: 'plugin_cache_dir = "/opt/cache"\n',
    });
    expect(configured.env).toEqual({});
    expect(configured.note).toBe("providers: the cache of the host's CLI configuration");
  });

  it('gives Terraform none when jobs run side by side, and none when it is off', () => {
    const side = withPluginCache({}, join(root, 'c'), '/usr/local/bin/terraform', {
      concurrency: 2,
      hostCliConfig: '',
    });
    expect(side.env).toEqual({});
    expect(side.note).toMatch(/not cached \(Terraform's plugin cache is not safe for jobs side by side/);
    expect(withPluginCache({}, join(root, 'd'), 'terraform', ONE_AT_A_TIME).env.TF_PLUGIN_CACHE_DIR).toBe(
      join(root, 'd'),
    );
    expect(
      withPluginCache({}, join(root, 'e'), 'tofu', { concurrency: 4, hostCliConfig: '' }).env.TF_PLUGIN_CACHE_DIR,
    ).toBe(join(root, 'e'));
    expect(withPluginCache({}, null, 'tofu', ONE_AT_A_TIME)).toEqual({
      env: {},
      note: 'providers: not cached (the agent runs with --plugin-cache off)',
    });
  });
});
