import type { Page, PageRequest } from '../../domain/pagination.js';
import type { MirrorArchive, MirrorArchiveAddress, ProviderAddress } from './records.js';

/** Where the mirror's archives are recorded (their bytes are in the `ArtifactStore`). */
export interface MirrorStore {
  /** Records a new archive; `ConflictError('mirror_archive_exists')` when its address is taken. */
  insert(archive: MirrorArchive): Promise<MirrorArchive>;
  find(ownerId: string, address: MirrorArchiveAddress): Promise<MirrorArchive | null>;
  get(ownerId: string, id: string): Promise<MirrorArchive | null>;
  /** The archives of one provider (of one version when given), oldest first. */
  archives(ownerId: string, provider: ProviderAddress, version?: string): Promise<MirrorArchive[]>;
  /** The providers the owner's mirror holds, sorted by source address. */
  providers(ownerId: string): Promise<ProviderAddress[]>;
  /** The owner's archives, newest first. */
  page(ownerId: string, request: PageRequest): Promise<Page<MirrorArchive>>;
  /** False when there was no such archive. */
  delete(ownerId: string, id: string): Promise<boolean>;
  /** The artifact keys of every archive of the owner (their files go when the owner does). */
  storageKeys(ownerId: string): Promise<string[]>;
}

/** One version of a provider as its origin registry lists it (`GET <providers.v1><ns>/<type>/versions`). */
export interface UpstreamVersion {
  version: string;
  platforms: { os: string; arch: string }[];
}

/** The origin registry's download answer for one platform (`…/<version>/download/<os>/<arch>`). */
export interface UpstreamDownload {
  filename: string;
  download_url: string;
  /** Lowercase hex sha256 of the archive, as the registry says. */
  shasum: string;
  shasums_url: string;
  shasums_signature_url: string;
  /** The ASCII-armored public keys the registry says may have signed `SHA256SUMS`. */
  signing_keys: string[];
}

/**
 * The origin registries of providers (OpenTofu's Provider Registry Protocol), for the mirror's
 * pull-through (issue 28). The registry of `hostname` is found by service discovery
 * (`https://<hostname>/.well-known/terraform.json`, `providers.v1`), over https only, and only for
 * the hostnames the server is configured with: any other is refused without being contacted. A
 * bearer token configured for the hostname goes to that hostname only, never to the download URLs.
 * Failures are `BadGatewayError('mirror_upstream_unavailable')` (unreachable, an error status, an
 * answer that is not the protocol's).
 */
export interface UpstreamRegistry {
  /** The provider's versions; empty when the registry does not know it (404). */
  versions(provider: ProviderAddress): Promise<UpstreamVersion[]>;
  /** One platform's package; null when the registry has no such version or platform (404). */
  download(provider: ProviderAddress, version: string, os: string, arch: string): Promise<UpstreamDownload | null>;
  /** A small file of a package (`SHA256SUMS`, its signature), at most `maxBytes`. */
  file(url: string, maxBytes: number): Promise<Uint8Array>;
  /** An archive, streamed from its `download_url` (the caller limits and checks it). */
  archive(url: string): Promise<AsyncIterable<Uint8Array>>;
}
