import type { Readable } from 'node:stream';
import { verifiedArtifactBody } from '../../artifacts/VerifiedBody.js';
import type { UserActor } from '../../domain/actors.js';
import { ConflictError, NotFoundError, TooLargeError } from '../../domain/errors.js';
import { type PageQuery, type PageResult, pageRequest, pageResult } from '../../domain/pagination.js';
import { requireUuid } from '../../domain/validation.js';
import { ownerScope } from '../../ports/UnitOfWork.js';
import type { RegistryActor, RegistryNamespaces } from '../namespaces.js';
import { recordAudit } from '../../usecases/audit.js';
import { type CoreDeps, isoNow } from '../../usecases/CoreDeps.js';
import {
  archiveHashes,
  DEFAULT_MIRROR_LIMITS,
  type MirrorArchive,
  type MirrorArchiveView,
  type MirrorLimits,
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
    readonly limits: MirrorLimits = DEFAULT_MIRROR_LIMITS,
  ) {}

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
    const tail = new ZipTail();
    const maxBytes = this.limits.maxArchiveBytes;
    const stored = await this.deps.artifacts.put(key, tail.watch(body), { maxBytes }).catch((error: unknown) => {
      if (!(error instanceof TooLargeError)) throw error;
      throw new TooLargeError('mirror_archive_too_large', `the archive is larger than ${maxBytes} bytes`, maxBytes);
    });
    try {
      const { tail: bytes, offset } = tail.bytes();
      const entries = centralDirectory(bytes, offset, this.limits);
      const object = await this.deps.artifacts.get(key);
      const h1 = await zipH1(verifiedArtifactBody(key, object.body, object.size, stored), entries, this.limits);
      const archive: MirrorArchive = {
        id,
        owner_id: ownerId,
        ...address,
        storage_key: key,
        size: stored.size,
        sha256: stored.sha256,
        h1,
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
          details: {
            provider: providerSource(address),
            version: address.version,
            platform: `${address.os}_${address.arch}`,
            sha256: stored.sha256,
          },
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

  /** The protocol's `index.json`: the versions of one provider (`404` when the mirror has none). */
  async versions(actor: RegistryActor, namespace: unknown, provider: ProviderAddress): Promise<string[]> {
    const address = parseProviderAddress(provider);
    const { ownerId, scope } = await this.namespaces.resolve(actor, namespace, 'registry.read');
    const archives = await this.deps.uow.read(scope, (stores) => stores.mirror.archives(ownerId, address));
    if (archives.length === 0) throw new NotFoundError('mirror_provider');
    return [...new Set(archives.map((archive) => archive.version))];
  }

  /** The protocol's `<version>.json`; `archiveUrl` is where each archive downloads (a signed URL). */
  async version(
    actor: RegistryActor,
    namespace: unknown,
    provider: ProviderAddress,
    version: unknown,
    archiveUrl: (archive: MirrorArchive) => string,
  ): Promise<MirrorVersionDocument> {
    const address = parseProviderAddress(provider);
    const wanted = parseProviderVersion(version);
    const { ownerId, scope } = await this.namespaces.resolve(actor, namespace, 'registry.read');
    const archives = await this.deps.uow.read(scope, (stores) => stores.mirror.archives(ownerId, address, wanted));
    if (archives.length === 0) throw new NotFoundError('mirror_provider');
    return {
      archives: Object.fromEntries(
        archives.map((archive) => [
          `${archive.os}_${archive.arch}`,
          { url: archiveUrl(archive), hashes: archiveHashes(archive) },
        ]),
      ),
    };
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
