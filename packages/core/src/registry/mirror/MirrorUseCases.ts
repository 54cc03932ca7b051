import type { Readable } from 'node:stream';
import { verifiedArtifactBody } from '../../artifacts/VerifiedBody.js';
import type { UserActor } from '../../domain/actors.js';
import { BadGatewayError, ConflictError, NotFoundError, TooLargeError } from '../../domain/errors.js';
import { type PageQuery, type PageResult, pageRequest, pageResult } from '../../domain/pagination.js';
import { requireUuid } from '../../domain/validation.js';
import { ownerScope } from '../../ports/UnitOfWork.js';
import type { RegistryActor, RegistryNamespaces } from '../namespaces.js';
import { recordAudit } from '../../usecases/audit.js';
import { type CoreDeps, isoNow } from '../../usecases/CoreDeps.js';
import { MAX_SHASUMS_BYTES, MAX_SIGNATURE_BYTES } from '../providers/RegistryProviderUseCases.js';
import { parseShasums } from '../providers/records.js';
import type { UpstreamDownload, UpstreamRegistry } from './ports.js';
import {
  archiveFileName,
  archiveHashes,
  DEFAULT_MIRROR_SETTINGS,
  type MirrorArchive,
  type MirrorArchiveAddress,
  type MirrorArchiveView,
  type MirrorSettings,
  mirrorArchiveView,
  type ProviderAddress,
  parseArchiveAddress,
  parseProviderAddress,
  parseProviderVersion,
  providerSource,
} from './records.js';
import { centralDirectory, ZipTail, zipH1 } from './zipHashes.js';

/** What a push sends: the archive's address as path parts, and its bytes as they stream. */
export interface MirrorPush {
  hostname: unknown;
  namespace: unknown;
  type: unknown;
  version: unknown;
  platform: unknown;
}

/** The network mirror protocol's `<version>.json`: each platform's archive and its hashes. */
export interface MirrorVersionDocument {
  archives: Record<string, { url: string; hashes: string[] }>;
}

/**
 * An archive the mirror does not hold yet but may pull from its origin registry: its address and
 * the sha256 the registry's signed `SHA256SUMS` lists for it. A signed URL carries it (`pullUrl`).
 */
export interface MirrorPullTarget extends MirrorArchiveAddress {
  owner_id: string;
  sha256: string;
}

/** Where the archives of a `<version>.json` download from: signed URLs the HTTP layer makes. */
export interface MirrorArchiveUrls {
  /** An archive the mirror holds. */
  archive(archive: MirrorArchive): string;
  /** An archive to pull from the origin registry when fetched. */
  pull(target: MirrorPullTarget): string;
}

/** The protocol's `index.json`, and why the origin registry's versions are missing from it, if they are. */
export interface MirrorVersions {
  versions: string[];
  /** The upstream failed and only the mirror's own versions are listed (the caller logs it). */
  upstreamFailure: Error | null;
}

/**
 * The provider network mirror (issue 28): pushing archives one at a time (`registry.publish`),
 * listing them (`registry.read`) and deleting them (`registry.manage`), every change audited; and
 * the two documents of the mirror protocol, read by `tofu init` with a person's token or a job's
 * (whoever the namespace rule, `registry/namespaces.ts`, lets read). Archives are served by signed URLs the HTTP
 * layer makes (`archiveUrl`).
 */
export class MirrorUseCases {
  constructor(
    private readonly deps: CoreDeps,
    private readonly namespaces: RegistryNamespaces,
    readonly limits: MirrorSettings = DEFAULT_MIRROR_SETTINGS,
  ) {}

  /** Pulls in progress in this process, by owner and address: concurrent fetches share one. */
  private readonly pulling = new Map<string, Promise<MirrorArchive>>();

  /**
   * `PUT /api/registry/mirror-archives/...`: streams the zip to the artifact store, reads it back
   * once for its `h1:` hash, then records it. The same bytes pushed again are the same archive
   * (`created: false`); other bytes at a taken address are `409 mirror_archive_exists`.
   */
  async push(
    user: UserActor,
    namespace: unknown,
    input: MirrorPush,
    body: AsyncIterable<Uint8Array>,
  ): Promise<{ archive: MirrorArchiveView; created: boolean }> {
    const address = parseArchiveAddress(input);
    const { ownerId, scope } = await this.namespaces.resolve(user, namespace, 'registry.publish');
    const id = this.deps.random.uuid();
    const key = `registry/mirror/${ownerId}/${id}.zip`;
    const stored = await this.store(key, body);
    try {
      const archive: MirrorArchive = {
        id,
        owner_id: ownerId,
        ...address,
        storage_key: key,
        size: stored.size,
        sha256: stored.sha256,
        h1: await this.h1Of(key, stored),
        origin: 'pushed',
        created_by: user.userId,
        created_at: isoNow(this.deps),
      };
      const result = await this.deps.uow.run(scope, async (stores) => {
        const existing = await stores.mirror.find(ownerId, address);
        if (existing) {
          if (existing.sha256 === archive.sha256) return { archive: existing, created: false };
          throw new ConflictError(
            'mirror_archive_exists',
            `${providerSource(address)} ${address.version} ${address.os}_${address.arch} is already in the mirror with other bytes; delete it first`,
          );
        }
        const saved = await stores.mirror.insert(archive);
        await recordAudit(stores, this.deps, user, {
          action: 'registry.mirror.push',
          target: { type: 'mirror_archive', id },
          owner_id: ownerId,
          details: archiveAuditDetails(address, stored.sha256),
        });
        return { archive: saved, created: true };
      });
      if (!result.created) await this.discard(key);
      return { archive: mirrorArchiveView(result.archive), created: result.created };
    } catch (error) {
      await this.discard(key);
      throw error;
    }
  }

  /** `GET /api/registry/mirror-archives/{namespace}`: the namespace's archives, newest first. */
  async list(user: UserActor, namespace: unknown, query: PageQuery): Promise<PageResult<MirrorArchiveView>> {
    const request = pageRequest(query, this.deps.settings.pageLimits);
    const { ownerId, scope } = await this.namespaces.resolve(user, namespace, 'registry.read');
    return this.deps.uow.read(scope, async (stores) =>
      pageResult(await stores.mirror.page(ownerId, request), request, mirrorArchiveView),
    );
  }

  /** `DELETE /api/registry/mirror-archives/{namespace}/{id}`: the record, then its file. */
  async delete(user: UserActor, namespace: unknown, id: unknown): Promise<void> {
    const archiveId = requireUuid(id, 'id');
    const { ownerId, scope } = await this.namespaces.resolve(user, namespace, 'registry.manage');
    const archive = await this.deps.uow.run(scope, async (stores) => {
      const found = await stores.mirror.get(ownerId, archiveId);
      if (!found || !(await stores.mirror.delete(ownerId, archiveId))) throw new NotFoundError('mirror_archive');
      await recordAudit(stores, this.deps, user, {
        action: 'registry.mirror.delete',
        target: { type: 'mirror_archive', id: archiveId },
        owner_id: ownerId,
        details: { provider: providerSource(found), version: found.version, platform: `${found.os}_${found.arch}` },
      });
      return found;
    });
    await this.discard(archive.storage_key);
  }

  /**
   * The protocol's `index.json`: the versions the mirror holds of one provider and, for a provider
   * of an upstream hostname (`TRELLIS_MIRROR_UPSTREAM`), those of its origin registry. An upstream
   * failure lists the mirror's own (`upstreamFailure` says why); with none, it is the failure.
   * `404` when neither has any.
   */
  async versions(actor: RegistryActor, namespace: unknown, provider: ProviderAddress): Promise<MirrorVersions> {
    const address = parseProviderAddress(provider);
    const { ownerId, scope } = await this.namespaces.resolve(actor, namespace, 'registry.read');
    const archives = await this.deps.uow.read(scope, (stores) => stores.mirror.archives(ownerId, address));
    const held = [...new Set(archives.map((archive) => archive.version))];
    const upstream = this.upstreamOf(address);
    let upstreamFailure: Error | null = null;
    let pulled: string[] = [];
    if (upstream) {
      try {
        pulled = (await upstream.versions(address)).map((each) => each.version);
      } catch (error) {
        if (held.length === 0 || !(error instanceof BadGatewayError)) throw error;
        upstreamFailure = error;
      }
    }
    const versions = [...new Set([...held, ...pulled])];
    if (versions.length === 0) throw new NotFoundError('mirror_provider');
    return { versions, upstreamFailure };
  }

  /**
   * The protocol's `<version>.json`: each platform's archive the mirror holds and, for a provider
   * of an upstream hostname, each other platform its origin registry has, listed with the sha256
   * its `SHA256SUMS` gives once the signature is checked against the registry's signing keys
   * (`zh:`), and a URL that pulls it into the mirror when fetched. A signature no key made, or a
   * download whose shasum is not the signed one, is a `502` and nothing is listed; an upstream that
   * cannot be reached leaves the mirror's own platforms (`upstreamFailure`), or is the failure.
   */
  async version(
    actor: RegistryActor,
    namespace: unknown,
    provider: ProviderAddress,
    version: unknown,
    urls: MirrorArchiveUrls,
  ): Promise<MirrorVersionDocument & { upstreamFailure: Error | null }> {
    const address = parseProviderAddress(provider);
    const wanted = parseProviderVersion(version);
    const { ownerId, scope } = await this.namespaces.resolve(actor, namespace, 'registry.read');
    const archives = await this.deps.uow.read(scope, (stores) => stores.mirror.archives(ownerId, address, wanted));
    const entries: [string, { url: string; hashes: string[] }][] = archives.map((archive) => [
      `${archive.os}_${archive.arch}`,
      { url: urls.archive(archive), hashes: archiveHashes(archive) },
    ]);
    const upstream = this.upstreamOf(address);
    let upstreamFailure: Error | null = null;
    if (upstream) {
      try {
        const held = new Set(entries.map(([platform]) => platform));
        const targets = await this.upstreamTargets(upstream, ownerId, { ...address, version: wanted }, held);
        for (const target of targets) {
          entries.push([`${target.os}_${target.arch}`, { url: urls.pull(target), hashes: [`zh:${target.sha256}`] }]);
        }
      } catch (error) {
        const unreachable = error instanceof BadGatewayError && error.code === 'mirror_upstream_unavailable';
        if (entries.length === 0 || !unreachable) throw error;
        upstreamFailure = error;
      }
    }
    if (entries.length === 0) throw new NotFoundError('mirror_provider');
    return { archives: Object.fromEntries(entries), upstreamFailure };
  }

  /**
   * Fetching a pull URL (no actor: its signature, checked by the caller, is the credential; it was
   * handed to someone who may read the namespace): the archive the mirror holds at the target's
   * address, pulled first from the origin registry when it is not there yet. The download streams
   * into the artifact store (at most `maxArchiveBytes`), is kept only when its sha256 is the signed
   * one, gets its `h1:` as a push does, and is recorded as `pulled` by the system
   * (`registry.mirror.pull`). Concurrent pulls of one archive end with one record.
   */
  async pull(target: MirrorPullTarget): Promise<MirrorArchive> {
    const key = `${target.owner_id}/${providerSource(target)}/${target.version}/${target.os}_${target.arch}`;
    const running = this.pulling.get(key);
    if (running) return this.sameArchive(await running, target);
    const pulling = this.pullOnce(target).finally(() => this.pulling.delete(key));
    this.pulling.set(key, pulling);
    return pulling;
  }

  private async pullOnce(target: MirrorPullTarget): Promise<MirrorArchive> {
    const ownerId = target.owner_id;
    const address: MirrorArchiveAddress = {
      hostname: target.hostname,
      namespace: target.namespace,
      type: target.type,
      version: target.version,
      os: target.os,
      arch: target.arch,
    };
    const scope = ownerScope(ownerId);
    const held = await this.deps.uow.read(scope, (stores) => stores.mirror.find(ownerId, address));
    if (held) return this.sameArchive(held, target);
    const upstream = this.upstreamOf(address);
    if (!upstream) throw new NotFoundError('mirror_archive');
    const download = await upstream.download(address, address.version, address.os, address.arch);
    if (!download) throw new NotFoundError('mirror_archive');
    const name = archiveFileName(address);
    if (download.shasum.toLowerCase() !== target.sha256) {
      throw shasumMismatch(
        `the upstream's download of ${name} names sha256 ${download.shasum}, not the signed ${target.sha256}`,
      );
    }
    const id = this.deps.random.uuid();
    const storageKey = `registry/mirror/${ownerId}/${id}.zip`;
    const stored = await this.store(storageKey, await upstream.archive(download.download_url));
    try {
      if (stored.sha256 !== target.sha256) {
        throw shasumMismatch(
          `the upstream's ${name} has sha256 ${stored.sha256}, but its signed SHA256SUMS lists ${target.sha256}`,
        );
      }
      const archive: MirrorArchive = {
        id,
        owner_id: ownerId,
        ...address,
        storage_key: storageKey,
        size: stored.size,
        sha256: stored.sha256,
        h1: await this.h1Of(storageKey, stored),
        origin: 'pulled',
        created_by: null,
        created_at: isoNow(this.deps),
      };
      const saved = await this.deps.uow
        .run(scope, async (stores) => {
          const inserted = await stores.mirror.insert(archive);
          await recordAudit(stores, this.deps, 'system', {
            action: 'registry.mirror.pull',
            target: { type: 'mirror_archive', id },
            owner_id: ownerId,
            details: { ...archiveAuditDetails(address, stored.sha256), upstream: address.hostname },
          });
          return inserted;
        })
        .catch(async (error: unknown) => {
          // Another replica (or a push) recorded it meanwhile: that record is the archive.
          if (!(error instanceof ConflictError && error.code === 'mirror_archive_exists')) throw error;
          const other = await this.deps.uow.read(scope, (stores) => stores.mirror.find(ownerId, address));
          if (!other) throw error;
          await this.discard(storageKey);
          return this.sameArchive(other, target);
        });
      return saved;
    } catch (error) {
      await this.discard(storageKey);
      throw error;
    }
  }

  /** The upstream of a provider's hostname when pull-through serves it, else null. */
  private upstreamOf(provider: ProviderAddress): UpstreamRegistry | null {
    const upstream = this.deps.upstreamRegistry;
    return upstream && this.limits.upstreams.includes(provider.hostname) ? upstream : null;
  }

  /** The platforms of a version the origin registry has and the mirror does not, each with its verified sha256. */
  private async upstreamTargets(
    upstream: UpstreamRegistry,
    ownerId: string,
    provider: ProviderAddress & { version: string },
    held: ReadonlySet<string>,
  ): Promise<MirrorPullTarget[]> {
    const listed = (await upstream.versions(provider)).find((each) => each.version === provider.version);
    const missing = (listed?.platforms ?? []).filter(
      (platform) => !held.has(`${platform.os}_${platform.arch}`) && isPlatform(platform),
    );
    // Every platform of a version shares one SHA256SUMS and signature: fetched and checked once.
    const verified = new Map<string, Promise<Map<string, string>>>();
    const targets = await Promise.all(
      missing.map(async ({ os, arch }) => {
        const download = await upstream.download(provider, provider.version, os, arch);
        if (!download) return null;
        const sumsKey = `${download.shasums_url}\n${download.shasums_signature_url}`;
        let sums = verified.get(sumsKey);
        if (!sums) {
          sums = this.verifiedSums(upstream, provider, download);
          verified.set(sumsKey, sums);
        }
        const name = archiveFileName({ type: provider.type, version: provider.version, os, arch });
        const sha256 = (await sums).get(download.filename) ?? (await sums).get(name);
        if (!sha256) {
          throw shasumMismatch(
            `the signed SHA256SUMS of ${providerSource(provider)} ${provider.version} does not list ${download.filename}`,
          );
        }
        if (sha256 !== download.shasum.toLowerCase()) {
          throw shasumMismatch(
            `the upstream's download of ${download.filename} names sha256 ${download.shasum}, but its signed SHA256SUMS lists ${sha256}`,
          );
        }
        return { owner_id: ownerId, ...provider, os, arch, sha256 };
      }),
    );
    return targets.filter((target): target is MirrorPullTarget => target !== null);
  }

  /** `SHA256SUMS` of a package once its detached signature is checked against the registry's keys. */
  private async verifiedSums(
    upstream: UpstreamRegistry,
    provider: ProviderAddress & { version: string },
    download: UpstreamDownload,
  ): Promise<Map<string, string>> {
    const [shasums, signature] = await Promise.all([
      upstream.file(download.shasums_url, MAX_SHASUMS_BYTES),
      upstream.file(download.shasums_signature_url, MAX_SIGNATURE_BYTES),
    ]);
    const what = `${providerSource(provider)} ${provider.version}`;
    const signed =
      download.signing_keys.length > 0 &&
      (await this.deps.pgp.verifyDetached(shasums, signature, download.signing_keys).catch(() => null));
    if (!signed) {
      throw new BadGatewayError(
        'mirror_upstream_signature_invalid',
        `the SHA256SUMS of ${what} at its origin registry is not signed by any of the ${download.signing_keys.length} signing key(s) it names; nothing was mirrored`,
      );
    }
    try {
      return new Map(
        [...parseShasums(Buffer.from(shasums).toString('utf8'))].map(([file, sum]) => [file, sum.toLowerCase()]),
      );
    } catch {
      throw new BadGatewayError(
        'mirror_upstream_unavailable',
        `the SHA256SUMS of ${what} at its origin registry is not readable`,
      );
    }
  }

  /** The archive recorded at a pull's address is the one pulled only when its bytes are the signed ones. */
  private sameArchive(archive: MirrorArchive, target: MirrorPullTarget): MirrorArchive {
    if (archive.sha256 === target.sha256) return archive;
    throw new ConflictError(
      'mirror_archive_exists',
      `${providerSource(archive)} ${archive.version} ${archive.os}_${archive.arch} is in the mirror with other bytes than its origin registry's`,
    );
  }

  /** Streams an archive into the artifact store (at most `maxArchiveBytes`), keeping the tail of the zip. */
  private async store(key: string, body: AsyncIterable<Uint8Array>): Promise<StoredZip> {
    const tail = new ZipTail();
    const maxBytes = this.limits.maxArchiveBytes;
    const stored = await this.deps.artifacts.put(key, tail.watch(body), { maxBytes }).catch((error: unknown) => {
      if (!(error instanceof TooLargeError)) throw error;
      throw new TooLargeError('mirror_archive_too_large', `the archive is larger than ${maxBytes} bytes`, maxBytes);
    });
    return { size: stored.size, sha256: stored.sha256, tail };
  }

  /** The `h1:` of a stored archive: its zip directory read from the tail, its files read back once through its digest. */
  private async h1Of(key: string, stored: StoredZip): Promise<string> {
    const { tail: bytes, offset } = stored.tail.bytes();
    const entries = centralDirectory(bytes, offset, this.limits);
    const object = await this.deps.artifacts.get(key);
    return zipH1(verifiedArtifactBody(key, object.body, object.size, stored), entries, this.limits);
  }

  /** The bytes of an archive a signed URL names, checked against its record as they stream. */
  async download(ownerId: string, id: string): Promise<{ archive: MirrorArchive; body: Readable }> {
    const archive = await this.deps.uow.read(ownerScope(ownerId), (stores) => stores.mirror.get(ownerId, id));
    if (!archive) throw new NotFoundError('mirror_archive');
    const object = await this.deps.artifacts.get(archive.storage_key);
    return { archive, body: verifiedArtifactBody(archive.storage_key, object.body, object.size, archive) };
  }

  /** The providers an owner's mirror holds (what a job's CLI configuration routes to it). */
  async providersOf(ownerId: string): Promise<string[]> {
    const providers = await this.deps.uow.read(ownerScope(ownerId), (stores) => stores.mirror.providers(ownerId));
    return providers.map(providerSource);
  }

  private async discard(key: string): Promise<void> {
    try {
      await this.deps.artifacts.delete(key);
    } catch {
      // Deliberately ignored: no record refers to the file; an operator may sweep it.
    }
  }
}

interface StoredZip {
  size: number;
  sha256: string;
  tail: ZipTail;
}

function shasumMismatch(message: string): BadGatewayError {
  return new BadGatewayError('mirror_upstream_shasum_mismatch', `${message}; nothing was mirrored`);
}

const PLATFORM_PART = /^[a-z0-9]{1,32}$/;

/** Platforms an upstream lists are used in keys and names: only plain `os`/`arch` words. */
function isPlatform(platform: { os: string; arch: string }): boolean {
  return PLATFORM_PART.test(platform.os) && PLATFORM_PART.test(platform.arch);
}

/** What the audit log says of an archive pushed or pulled into the mirror. */
function archiveAuditDetails(address: MirrorArchiveAddress, sha256: string) {
  return {
    provider: providerSource(address),
    version: address.version,
    platform: `${address.os}_${address.arch}`,
    sha256,
  };
}
