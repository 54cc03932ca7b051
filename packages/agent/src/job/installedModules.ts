import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { JsonObject, ModuleUse } from '@trellis/core';
import { MAX_MODULE_SOURCE_LENGTH, MAX_MODULE_VERSION_LENGTH, MAX_REPORTED_MODULES } from '@trellis/core/agent';
import type { JobLog } from '../logs/JobLog.js';

/** What the engine's `init` installed, per its data directory (`TF_DATA_DIR`, else `.terraform`). */
export function modulesManifestPath(dir: string, env: NodeJS.ProcessEnv): string {
  return resolve(dir, env.TF_DATA_DIR || '.terraform', 'modules', 'modules.json');
}

export interface InstalledModules {
  modules: ModuleUse[];
  /** Why nothing (or not everything) was read, for the job log; null when all was read. */
  note: string | null;
}

/**
 * The registry modules of `modules.json` (`{"Modules":[{"Key","Source","Version","Dir"}]}`, as
 * OpenTofu writes it after `init`): those with a version (a local or git module has none), each
 * source and version once, within the limits the control plane checks (issue 28). A missing or
 * unreadable file is no module: the job goes on.
 */
export function readInstalledModules(file: string): InstalledModules {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    return { modules: [], note: missing ? null : `modules: ${file} could not be read (${(error as Error).message})` };
  }
  let manifest: unknown;
  try {
    manifest = JSON.parse(text);
  } catch {
    return { modules: [], note: 'modules: modules.json is not JSON; no module reported' };
  }
  const entries = isObject(manifest) && Array.isArray(manifest.Modules) ? manifest.Modules : null;
  if (entries === null) return { modules: [], note: 'modules: modules.json has no Modules list; no module reported' };
  const seen = new Set<string>();
  const modules: ModuleUse[] = [];
  let skipped = 0;
  for (const entry of entries) {
    if (!isObject(entry) || typeof entry.Source !== 'string' || typeof entry.Version !== 'string') continue;
    const { Source: source, Version: version } = entry;
    if (source === '' || version === '') continue;
    const key = `${source}@${version}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (
      source.length > MAX_MODULE_SOURCE_LENGTH ||
      version.length > MAX_MODULE_VERSION_LENGTH ||
      modules.length >= MAX_REPORTED_MODULES
    ) {
      skipped += 1;
      continue;
    }
    modules.push({ source, version });
  }
  const note = skipped > 0 ? `modules: ${skipped} more registry module(s) not reported (past the limits)` : null;
  return { modules, note };
}

/**
 * What a PLAN or DEPLOY reports of the registry modules its `init` installed (issue 28), so the
 * registry page can say which vines use which version: `{ modules }` when there are any, each
 * logged. Never fails the job.
 */
export function installedModulesMetadata(dir: string, env: NodeJS.ProcessEnv, log: Pick<JobLog, 'system'>): JsonObject {
  const { modules, note } = readInstalledModules(modulesManifestPath(dir, env));
  if (note !== null) log.system(note);
  if (modules.length === 0) return {};
  log.system(`modules: ${modules.map((used) => `${used.source} ${used.version}`).join(', ')}`);
  return { modules: modules.map((used) => ({ ...used })) };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
