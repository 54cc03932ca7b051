import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requirePeer } from './peers.js';

/**
 * The tiny provider the peers build (scripts/test-provider: `null_resource`): null, with a loud
 * note, when it is not built; an error under CI=true (`requirePeer`).
 */
export function testProviderBinary(suite = 'a suite that installs the test provider'): string | null {
  return requirePeer('terraform-provider-null', suite);
}

/** This machine's platform as provider packages name it (`linux_amd64`). */
export function providerPlatform(): string {
  const arch = { x64: 'amd64', arm64: 'arm64', ia32: '386' }[process.arch as string] ?? process.arch;
  return `${process.platform}_${arch}`;
}

export interface ProviderMirrorDir {
  dir: string;
  /** The zip, relative to `dir`. */
  zip: string;
  version: string;
  platform: string;
  /** `zh:` of the zip. */
  zh: string;
}

/**
 * A directory as `tofu providers mirror <dir>` writes it, holding the test provider as
 * `registry.opentofu.org/hashicorp/null` (`<hostname>/<namespace>/<type>/terraform-provider-null_<version>_<platform>.zip`,
 * `index.json`, `<version>.json`), made with no network from the peers' build of it.
 */
export function writeProviderMirrorDir(binary: string, version = '3.2.4'): ProviderMirrorDir {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-provider-mirror-'));
  const platform = providerPlatform();
  const providerDir = join(dir, 'registry.opentofu.org', 'hashicorp', 'null');
  mkdirSync(providerDir, { recursive: true });
  const staging = mkdtempSync(join(tmpdir(), 'trellis-provider-zip-'));
  const executable = `terraform-provider-null_v${version}_x5`;
  copyFileSync(binary, join(staging, executable));
  const name = `terraform-provider-null_${version}_${platform}.zip`;
  execFileSync('zip', ['-q', '-X', join(providerDir, name), executable], { cwd: staging });
  rmSync(staging, { recursive: true, force: true });
  const zh = createHash('sha256')
    .update(readFileSync(join(providerDir, name)))
    .digest('hex');
  writeFileSync(join(providerDir, 'index.json'), JSON.stringify({ versions: { [version]: {} } }));
  writeFileSync(
    join(providerDir, `${version}.json`),
    JSON.stringify({ archives: { [platform]: { url: name, hashes: [`zh:${zh}`] } } }),
  );
  return { dir, zip: join('registry.opentofu.org', 'hashicorp', 'null', name), version, platform, zh: `zh:${zh}` };
}

/** A configuration that needs `hashicorp/null` (one `null_resource`). */
export const NULL_PROVIDER_CONFIG = `terraform {
  required_providers {
    null = { source = "hashicorp/null", version = "~> 3.2" }
  }
}
resource "null_resource" "one" {}
`;

/** A CLI configuration that installs every provider from the network mirror at `url`, with `token` for `host`. */
export function mirrorCliConfig(url: string, host: string, token: string | null): string {
  const credentials = token === null ? '' : `credentials "${host}" {\n  token = "${token}"\n}\n`;
  return `provider_installation {\n  network_mirror {\n    url = "${url}"\n  }\n}\n${credentials}`;
}
