import {
  BadGatewayError,
  type ProviderAddress,
  providerSource,
  type UpstreamDownload,
  type UpstreamRegistry,
  type UpstreamVersion,
} from '@trellis/core';

/** One platform's package as a fake origin registry serves it. */
export interface FakeUpstreamPackage {
  provider: ProviderAddress;
  version: string;
  os: string;
  arch: string;
  zip: Uint8Array;
  /** The `SHA256SUMS` text and its detached signature, as the registry serves them. */
  shasums: string;
  signature: Uint8Array;
  /** The armored keys the download answer names. */
  keys: string[];
  /** The download answer's `shasum` (default: the sha256 the test computed and passes here). */
  shasum: string;
}

/**
 * An `UpstreamRegistry` with no network: packages the test adds, each call recorded; `down`
 * makes every call fail as an unreachable registry does.
 */
export class FakeUpstreamRegistry implements UpstreamRegistry {
  readonly calls: string[] = [];
  down = false;
  /** How many archives were downloaded (each `archive` call). */
  downloads = 0;
  private readonly packages: FakeUpstreamPackage[] = [];

  add(pkg: FakeUpstreamPackage): void {
    this.packages.push(pkg);
  }

  async versions(provider: ProviderAddress): Promise<UpstreamVersion[]> {
    this.record(`versions ${providerSource(provider)}`);
    const versions = new Map<string, UpstreamVersion>();
    for (const pkg of this.packages.filter((each) => providerSource(each.provider) === providerSource(provider))) {
      const entry = versions.get(pkg.version) ?? { version: pkg.version, platforms: [] };
      entry.platforms.push({ os: pkg.os, arch: pkg.arch });
      versions.set(pkg.version, entry);
    }
    return [...versions.values()];
  }

  async download(
    provider: ProviderAddress,
    version: string,
    os: string,
    arch: string,
  ): Promise<UpstreamDownload | null> {
    this.record(`download ${providerSource(provider)} ${version} ${os}_${arch}`);
    const index = this.packages.findIndex(
      (pkg) =>
        providerSource(pkg.provider) === providerSource(provider) &&
        pkg.version === version &&
        pkg.os === os &&
        pkg.arch === arch,
    );
    const pkg = this.packages[index];
    if (!pkg) return null;
    // One SHA256SUMS per version, as a registry serves it: the first package's of the version.
    const first = this.packages.findIndex(
      (each) => providerSource(each.provider) === providerSource(provider) && each.version === version,
    );
    const base = `https://${provider.hostname}/files`;
    return {
      filename: `terraform-provider-${provider.type}_${version}_${os}_${arch}.zip`,
      download_url: `${base}/${index}/zip`,
      shasum: pkg.shasum,
      shasums_url: `${base}/${first}/shasums`,
      shasums_signature_url: `${base}/${first}/signature`,
      signing_keys: pkg.keys,
    };
  }

  async file(url: string, maxBytes: number): Promise<Uint8Array> {
    this.record(`file ${url}`);
    const [, index, kind] = /\/files\/(\d+)\/(\w+)$/.exec(url) ?? [];
    const pkg = this.packages[Number(index)];
    const bytes = kind === 'shasums' ? Buffer.from(pkg?.shasums ?? '') : kind === 'signature' ? pkg?.signature : null;
    if (!pkg || !bytes || bytes.byteLength > maxBytes) throw new BadGatewayError('mirror_upstream_unavailable', url);
    return bytes;
  }

  async archive(url: string): Promise<AsyncIterable<Uint8Array>> {
    this.record(`archive ${url}`);
    const [, index] = /\/files\/(\d+)\/zip$/.exec(url) ?? [];
    const pkg = this.packages[Number(index)];
    if (!pkg) throw new BadGatewayError('mirror_upstream_unavailable', url);
    this.downloads++;
    const zip = pkg.zip;
    return (async function* () {
      yield zip;
    })();
  }

  private record(call: string): void {
    this.calls.push(call);
    if (this.down) throw new BadGatewayError('mirror_upstream_unavailable', 'the fake upstream is down');
  }
}
