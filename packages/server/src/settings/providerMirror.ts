import { isRegistryHostname } from '@trellis/core';
import { ConfigError } from './ConfigError.js';
import { custom, integer, optionalText } from './Setting.js';

/** The provider network mirror of the private registry (docs/registry.md, "Provider mirror"). */
export const PROVIDER_MIRROR_SETTINGS = {
  mirrorMaxArchiveMb: integer({
    env: 'TRELLIS_MIRROR_MAX_ARCHIVE_MB',
    default: 512,
    min: 1,
    max: 4096,
    description:
      'largest provider archive `trellis mirror push` may push (or the mirror may pull), in MiB (`413 mirror_archive_too_large`); it may unpack to 4 times as much',
  }),
  mirrorUpstream: custom<readonly string[]>({
    env: 'TRELLIS_MIRROR_UPSTREAM',
    accepts: 'comma-separated provider hostnames',
    default: [],
    shownDefault: 'none (off)',
    description:
      'pull-through: the provider hostnames (`registry.opentofu.org,registry.terraform.io`, or `host:port`) whose providers the mirror fetches from their origin registry, over https, the first time `tofu` asks for them; no other host is ever contacted ([registry.md](registry.md#pull-through-from-the-origin-registries))',
    parse(raw, name) {
      const hosts = raw
        .split(',')
        .map((host) => host.trim().toLowerCase())
        .filter((host) => host !== '');
      const bad = hosts.find((host) => !isRegistryHostname(host));
      if (bad !== undefined) {
        throw new ConfigError(`${name} must list provider hostnames such as registry.opentofu.org (got "${bad}")`);
      }
      return Object.freeze([...new Set(hosts)]);
    },
  }),
  mirrorUpstreamCredentialsFile: optionalText({
    env: 'TRELLIS_MIRROR_UPSTREAM_CREDENTIALS_FILE',
    accepts: 'a file path',
    description:
      'a `credentials.tfrc.json` (what `tofu login` writes: `{"credentials":{"<host>":{"token":"…"}}}`): the bearer token sent to each upstream hostname\'s registry (a private one), and only to it; read at start-up, never logged',
  }),
  mirrorUpstreamTimeoutSeconds: integer({
    env: 'TRELLIS_MIRROR_UPSTREAM_TIMEOUT_SECONDS',
    default: 30,
    min: 1,
    max: 600,
    description:
      "how long each request to an upstream registry may take (discovery, versions, a download's answer, `SHA256SUMS`); an archive's download may take 20 times as long",
  }),
};
