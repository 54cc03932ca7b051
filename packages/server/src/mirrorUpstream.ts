import { readFileSync } from 'node:fs';
import { HttpUpstreamRegistry } from '@trellis/providers';
import type { ServerConfig } from './config.js';
import { ConfigError } from './settings/ConfigError.js';

type UpstreamConfig = Pick<
  ServerConfig,
  'mirrorUpstream' | 'mirrorUpstreamCredentialsFile' | 'mirrorUpstreamTimeoutSeconds'
>;

/**
 * The origin registries the provider mirror pulls through from (`TRELLIS_MIRROR_UPSTREAM`), with
 * the tokens of `TRELLIS_MIRROR_UPSTREAM_CREDENTIALS_FILE` for the listed hosts only. With no host
 * listed it is never asked (core checks the list first) and contacts nothing.
 */
export function mirrorUpstreamRegistry(config: UpstreamConfig): HttpUpstreamRegistry {
  const file = config.mirrorUpstreamCredentialsFile;
  const tokens = file === null ? {} : upstreamTokens(file, config.mirrorUpstream);
  return new HttpUpstreamRegistry({
    hosts: config.mirrorUpstream,
    tokens,
    timeoutMs: config.mirrorUpstreamTimeoutSeconds * 1000,
  });
}

/**
 * The tokens of a `credentials.tfrc.json` (`{"credentials":{"<host>":{"token":"…"}}}`, what
 * `tofu login` writes) for the hosts listed. Errors name the file and the host, never a token.
 */
export function upstreamTokens(file: string, hosts: readonly string[]): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    const reason = error instanceof SyntaxError ? 'is not JSON' : 'cannot be read';
    throw new ConfigError(`TRELLIS_MIRROR_UPSTREAM_CREDENTIALS_FILE ${file} ${reason}`);
  }
  const credentials = (parsed as { credentials?: unknown } | null)?.credentials;
  if (typeof credentials !== 'object' || credentials === null || Array.isArray(credentials)) {
    throw new ConfigError(
      `TRELLIS_MIRROR_UPSTREAM_CREDENTIALS_FILE ${file} holds no "credentials" object (the credentials.tfrc.json format)`,
    );
  }
  const tokens: Record<string, string> = {};
  for (const [host, entry] of Object.entries(credentials as Record<string, unknown>)) {
    const name = host.toLowerCase();
    if (!hosts.includes(name)) continue;
    const token = (entry as { token?: unknown } | null)?.token;
    if (typeof token !== 'string' || token === '') {
      throw new ConfigError(
        `TRELLIS_MIRROR_UPSTREAM_CREDENTIALS_FILE ${file}: the credentials of ${host} have no token`,
      );
    }
    tokens[name] = token;
  }
  return tokens;
}
