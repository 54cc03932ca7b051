import { mkdirSync } from 'node:fs';
import { basename } from 'node:path';

/** `--plugin-cache` / `TRELLIS_AGENT_PLUGIN_CACHE`: `auto` (a directory in the work dir), `off`, or a directory. */
export type PluginCacheSetting = 'auto' | 'off' | { dir: string };

/** What the engine of one job gets: its environment, and the line the job's log says about it. */
export interface PluginCacheChoice {
  env: NodeJS.ProcessEnv;
  note: string;
}

/**
 * The engine's provider plugin cache (issue 31): every provider an agent's jobs install is
 * downloaded once into the agent's cache and linked into each job's workspace after that, so a
 * job's `init` does not fetch the same providers again. The job's own workspace is thrown away
 * with its lock file, so the engine may use the cache before the lock file has every platform's
 * hash (`TF_PLUGIN_CACHE_MAY_BREAK_DEPENDENCY_LOCK_FILE`); a lock file the configuration carries
 * is still checked against what is cached. The host's own cache (`TF_PLUGIN_CACHE_DIR`, or
 * `plugin_cache_dir` in its CLI configuration) is left as it is. Terraform's cache is not safe for
 * two `init`s at once (OpenTofu's is, from 1.10), so an agent running jobs side by side gives
 * Terraform none.
 */
export function withPluginCache(
  env: NodeJS.ProcessEnv,
  cacheDir: string | null,
  engineBin: string,
  options: { concurrency: number; hostCliConfig: string },
): PluginCacheChoice {
  if (env.TF_PLUGIN_CACHE_DIR) return { env, note: `providers: the host's cache ${env.TF_PLUGIN_CACHE_DIR}` };
  if (/^\s*plugin_cache_dir\b/m.test(options.hostCliConfig)) {
    return { env, note: "providers: the cache of the host's CLI configuration" };
  }
  if (cacheDir === null) return { env, note: 'providers: not cached (the agent runs with --plugin-cache off)' };
  if (basename(engineBin).startsWith('terraform') && options.concurrency > 1) {
    return {
      env,
      note: "providers: not cached (Terraform's plugin cache is not safe for jobs side by side: --concurrency > 1)",
    };
  }
  mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
  return {
    env: { ...env, TF_PLUGIN_CACHE_DIR: cacheDir, TF_PLUGIN_CACHE_MAY_BREAK_DEPENDENCY_LOCK_FILE: 'true' },
    note: `providers: cached in ${cacheDir} for this agent's jobs`,
  };
}

/** Reads `--plugin-cache`: `auto`, `off`, or an absolute directory; null when it is none of those. */
export function parsePluginCache(value: string): PluginCacheSetting | null {
  if (value === 'auto' || value === 'off') return value;
  return value.startsWith('/') ? { dir: value } : null;
}

/** The cache directory of a setting: `auto` is `plugin-cache` in the agent's work dir; null for `off`. */
export function pluginCacheDir(setting: PluginCacheSetting, workDir: string): string | null {
  if (setting === 'off') return null;
  return setting === 'auto' ? `${workDir.replace(/\/+$/, '')}/plugin-cache` : setting.dir;
}
