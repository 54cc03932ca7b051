import { readFileSync, writeFileSync } from 'node:fs';

/** What a claim gives of the owner's registry (issue 28). */
export interface ClaimedRegistry {
  token: string;
  namespace: string;
  mirror_providers: string[];
}

/** `auto`: install the providers the owner's mirror holds from it; `off`: never (`TRELLIS_AGENT_PROVIDER_MIRROR`). */
export type ProviderMirrorMode = 'auto' | 'off';
export const PROVIDER_MIRROR_MODES: readonly ProviderMirrorMode[] = ['auto', 'off'];

export interface JobCliConfig {
  /** The file's text (it holds the job's registry token: written 0600, never logged). */
  text: string;
  /** The mirror's URL when the engine installs providers from it, else null (and why not). */
  mirrorUrl: string | null;
  skipped: string | null;
}

const hcl = (value: string) => JSON.stringify(value);
const list = (values: readonly string[]) => `[${values.map(hcl).join(', ')}]`;

/**
 * The engine's CLI configuration for one job: the control plane's host credentials (the job's
 * registry token, so `tofu init` reads the owner's private modules and providers from Trellis), and
 * when the owner's mirror holds providers, an installation that takes those from the mirror
 * (`network_mirror` with `include`) and every other one as before (`direct` with `exclude`). A
 * network mirror must be `https://`; over plain HTTP the mirror is left out. The host's own CLI
 * configuration (`hostConfig`, the file its `TF_CLI_CONFIG_FILE` names) comes first, kept whole;
 * when it installs providers its own way, the mirror is left out.
 */
export function jobCliConfig(
  serverUrl: string,
  registry: ClaimedRegistry,
  mode: ProviderMirrorMode,
  hostConfig = '',
): JobCliConfig {
  const server = new URL(serverUrl);
  const mirrorUrl = `${server.origin}${server.pathname.replace(/\/+$/, '')}/api/registry/mirror/${encodeURIComponent(registry.namespace)}/`;
  const providers = registry.mirror_providers;
  let skipped: string | null = null;
  if (mode === 'off') skipped = 'the agent does not use provider mirrors (TRELLIS_AGENT_PROVIDER_MIRROR=off)';
  else if (providers.length === 0) skipped = `the mirror of ${registry.namespace} holds no provider`;
  else if (server.protocol !== 'https:') skipped = 'OpenTofu takes a network mirror over https:// only';
  else if (/^\s*provider_installation\b/m.test(hostConfig))
    skipped = "the host's CLI configuration installs providers its own way";
  const installation =
    skipped === null
      ? `provider_installation {\n  network_mirror {\n    url     = ${hcl(mirrorUrl)}\n    include = ${list(providers)}\n  }\n  direct {\n    exclude = ${list(providers)}\n  }\n}\n`
      : '';
  const credentials = `credentials ${hcl(server.host.toLowerCase())} {\n  token = ${hcl(registry.token)}\n}\n`;
  const host = hostConfig === '' ? '' : `${hostConfig.replace(/\n*$/, '\n')}\n`;
  return { text: `${host}${installation}${credentials}`, mirrorUrl: skipped === null ? mirrorUrl : null, skipped };
}

/** Writes the configuration owner-only and points the engine at it (`TF_CLI_CONFIG_FILE`, never an argument). */
export function withCliConfig(env: NodeJS.ProcessEnv, file: string, config: JobCliConfig): NodeJS.ProcessEnv {
  writeFileSync(file, config.text, { mode: 0o600 });
  return { ...env, TF_CLI_CONFIG_FILE: file };
}

/** The text of the host's own CLI configuration (its `TF_CLI_CONFIG_FILE`), or '' when there is none to read. */
export function hostCliConfig(file: string | undefined): string {
  if (!file) return '';
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
