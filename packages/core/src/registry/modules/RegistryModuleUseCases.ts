import type { Readable } from 'node:stream';
import { verifiedArtifactBody } from '../../artifacts/VerifiedBody.js';
import {
  MAX_CONFIGURATION_ENTRIES,
  MAX_CONFIGURATION_UNPACKED_BYTES,
} from '../../configurationVersions/ConfigurationVersionUseCases.js';
import type { UserActor } from '../../domain/actors.js';
import {
  ConflictError,
  isDomainError,
  NotFoundError,
  TooLargeError,
  UnprocessableError,
  ValidationError,
} from '../../domain/errors.js';
import { type PageQuery, type PageResult, pageRequest, pageResult } from '../../domain/pagination.js';
import { requireUuid } from '../../domain/validation.js';
import { ownerScope, type Stores } from '../../ports/UnitOfWork.js';
import { type AuditBy, recordAudit } from '../../usecases/audit.js';
import { type CoreDeps, isoNow } from '../../usecases/CoreDeps.js';
import { type RegistryActor, type RegistryNamespace, RegistryNamespaces } from '../namespaces.js';
import {
  MAX_DEPRECATION_REASON,
  type ModuleAddress,
  type ModuleVersionAddress,
  moduleVersionKey,
  type RegistryModule,
  type RegistryModuleVersion,
  type RegistryModuleVersionView,
  type RegistryModuleView,
  requireModuleName,
  requireModuleSystem,
} from './records.js';
import { compareSemVer, latestVersion, requireModuleVersion } from './semver.js';

/** A module found in its namespace, with the scope to act on it in. */
export interface FoundModule {
  namespace: RegistryNamespace;
  module: RegistryModule;
}

/** What a signed download URL names: a version's tarball, by its owner and id. */
export interface ModuleDownload {
  ownerId: string;
  versionId: string;
}

/**
 * The module registry (issue 28): publish a version from a tarball (streamed into the artifact
 * store, then checked like a configuration tarball: gzip, no path or link out of its root, within
 * limits), list modules and versions, hand out a version for download, deprecate and delete.
 * Reading needs `registry.read` in the namespace, publishing `registry.publish`, deprecating and
 * deleting `registry.manage`. A published version is immutable: publishing it again is
 * `409 module_version_exists`. Every change is audited.
 */
export class RegistryModuleUseCases {
  readonly namespaces: RegistryNamespaces;

  constructor(private readonly deps: CoreDeps) {
    this.namespaces = new RegistryNamespaces(deps);
  }

  /**
   * Publishes `body` (a `.tar.gz` of the module's files at its root) as `address.version`.
   * `declaredBytes` (the request's `Content-Length`) over the limit is refused before reading.
   */
  async publish(
    actor: UserActor,
    address: ModuleVersionAddress,
    body: AsyncIterable<Uint8Array>,
    declaredBytes: number | null = null,
  ): Promise<RegistryModuleVersionView> {
    requireModuleName(address.name);
    requireModuleSystem(address.system);
    requireModuleVersion(address.version);
    const namespace = await this.namespaces.resolve(actor, address.namespace, 'registry.publish');
    return this.publishIn(namespace, actor, address, body, declaredBytes);
  }

  /**
   * Publishes into a namespace already resolved and authorized: what `publish` does once the
   * person may, and what a publisher acting for the owner itself (a Git tag's webhook, `by`
   * `'system'`, in `ownerScope(ownerId)`) calls directly. `published_by` is the person, or null.
   */
  async publishIn(
    namespace: RegistryNamespace,
    by: AuditBy,
    address: Omit<ModuleVersionAddress, 'namespace'>,
    body: AsyncIterable<Uint8Array>,
    declaredBytes: number | null = null,
  ): Promise<RegistryModuleVersionView> {
    const name = requireModuleName(address.name);
    const system = requireModuleSystem(address.system);
    const version = requireModuleVersion(address.version);
    const maxBytes = this.deps.settings.registry.moduleMaxBytes;
    if (declaredBytes !== null && declaredBytes > maxBytes) throw moduleTooLarge(maxBytes);
    const published = await this.deps.uow.read(namespace.scope, async (stores) => {
      const module = await stores.registryModules.find(namespace.ownerId, name, system);
      return module ? stores.registryModules.getVersion(namespace.ownerId, module.id, version) : null;
    });
    if (published) throw versionExists(namespace.name, name, system, version);

    const id = this.deps.random.uuid();
    const key = moduleVersionKey(namespace.ownerId, id);
    const stored = await this.store(key, body, maxBytes);
    const record = (module: RegistryModule): RegistryModuleVersion => ({
      id,
      owner_id: namespace.ownerId,
      module_id: module.id,
      version,
      storage_key: key,
      size: stored.size,
      sha256: stored.sha256,
      deprecated_at: null,
      deprecation_reason: null,
      published_by: by !== 'system' && 'userId' in by ? by.userId : null,
      created_at: isoNow(this.deps),
    });
    try {
      // A second try when a concurrent publish created the module first (its insert then conflicts).
      for (let attempt = 1; ; attempt += 1) {
        try {
          const created = await this.deps.uow.run(namespace.scope, async (stores) => {
            const module = await this.moduleFor(stores, namespace.ownerId, name, system);
            const saved = await stores.registryModules.createVersion(record(module));
            await this.refreshLatest(stores, module);
            await recordAudit(stores, this.deps, by, {
              action: 'module_version.publish',
              target: { type: 'module_version', id },
              owner_id: namespace.ownerId,
              details: {
                module: `${namespace.name}/${name}/${system}`,
                version,
                size: saved.size,
                sha256: saved.sha256,
              },
            });
            return saved;
          });
          return versionView(namespace.name, name, system, created);
        } catch (error) {
          if (!(error instanceof ConflictError)) throw error;
          const exists = await this.deps.uow.read(namespace.scope, async (stores) => {
            const module = await stores.registryModules.find(namespace.ownerId, name, system);
            return module ? stores.registryModules.getVersion(namespace.ownerId, module.id, version) : null;
          });
          if (exists) throw versionExists(namespace.name, name, system, version);
          if (attempt >= 2) throw error;
        }
      }
    } catch (error) {
      await this.deps.artifacts.delete(key).catch(() => undefined);
      throw error;
    }
  }

  /** The namespace's modules, newest first, a page at a time. */
  async list(actor: UserActor, query: PageQuery & { namespace?: unknown }): Promise<PageResult<RegistryModuleView>> {
    const namespace = await this.namespaces.resolve(actor, query.namespace, 'registry.read');
    const request = pageRequest(query, this.deps.settings.pageLimits);
    const page = await this.deps.uow.read(namespace.scope, (stores) =>
      stores.registryModules.page(namespace.ownerId, request),
    );
    return pageResult(page, request, (module) => moduleView(namespace.name, module));
  }

  /** A module and its versions, highest first. */
  async versions(
    actor: RegistryActor,
    address: ModuleAddress,
  ): Promise<{ module: RegistryModuleView; versions: RegistryModuleVersionView[] }> {
    const { namespace, module } = await this.find(actor, address, 'registry.read');
    const versions = await this.deps.uow.read(namespace.scope, (stores) =>
      stores.registryModules.listVersions(namespace.ownerId, module.id),
    );
    return {
      module: moduleView(namespace.name, module),
      versions: versions
        .sort((a, b) => compareSemVer(b.version, a.version))
        .map((version) => versionView(namespace.name, module.name, module.system, version)),
    };
  }

  /** One version, for the download the registry protocol hands out (a signed URL of `ModuleDownload`). */
  async download(actor: RegistryActor, address: ModuleVersionAddress): Promise<ModuleDownload> {
    const { namespace, version } = await this.findVersion(actor, address, 'registry.read');
    return { ownerId: namespace.ownerId, versionId: version.id };
  }

  /** The bytes of a version, checked against their digest as they are read (after the URL's signature is). */
  async openTarball(
    ownerId: unknown,
    versionId: unknown,
  ): Promise<{ body: Readable; size: number; sha256: string; version: RegistryModuleVersion }> {
    const owner = requireUuid(ownerId, 'owner');
    const id = requireUuid(versionId, 'version');
    const version = await this.deps.uow.read(ownerScope(owner), (stores) =>
      stores.registryModules.getVersionById(owner, id),
    );
    if (!version) throw versionNotFound();
    const object = await this.deps.artifacts.get(version.storage_key);
    const digest = { size: version.size, sha256: version.sha256 };
    return { body: verifiedArtifactBody(version.storage_key, object.body, object.size, digest), ...digest, version };
  }

  /** Deprecates a version (still installable), or with `deprecated: false` undoes it. */
  async deprecate(
    actor: UserActor,
    address: ModuleVersionAddress,
    input: { deprecated?: unknown; reason?: unknown },
  ): Promise<RegistryModuleVersionView> {
    const deprecated = input.deprecated ?? true;
    if (typeof deprecated !== 'boolean') {
      throw new ValidationError('deprecated must be true or false', [
        { path: 'deprecated', message: 'must be a boolean' },
      ]);
    }
    const reason = input.reason ?? null;
    if (reason !== null && (typeof reason !== 'string' || reason.length > MAX_DEPRECATION_REASON)) {
      throw new ValidationError(`reason must be a text of at most ${MAX_DEPRECATION_REASON} characters`, [
        { path: 'reason', message: `must be a string of at most ${MAX_DEPRECATION_REASON} characters` },
      ]);
    }
    const { namespace, module, version } = await this.findVersion(actor, address, 'registry.manage');
    const updated = await this.deps.uow.run(namespace.scope, async (stores) => {
      const saved = await stores.registryModules.setDeprecation(
        namespace.ownerId,
        version.id,
        deprecated ? isoNow(this.deps) : null,
        deprecated ? reason : null,
      );
      if (!saved) throw versionNotFound();
      await recordAudit(stores, this.deps, actor, {
        action: deprecated ? 'module_version.deprecate' : 'module_version.undeprecate',
        target: { type: 'module_version', id: version.id },
        owner_id: namespace.ownerId,
        details: { module: `${namespace.name}/${module.name}/${module.system}`, version: version.version, reason },
      });
      return saved;
    });
    return versionView(namespace.name, module.name, module.system, updated);
  }

  /** Deletes one version and its tarball: configurations that pin it can no longer `init`. */
  async deleteVersion(actor: UserActor, address: ModuleVersionAddress): Promise<void> {
    const { namespace, module, version } = await this.findVersion(actor, address, 'registry.manage');
    await this.deps.uow.run(namespace.scope, async (stores) => {
      if (!(await stores.registryModules.deleteVersion(namespace.ownerId, version.id))) throw versionNotFound();
      await this.refreshLatest(stores, module);
      await recordAudit(stores, this.deps, actor, {
        action: 'module_version.delete',
        target: { type: 'module_version', id: version.id },
        owner_id: namespace.ownerId,
        details: { module: `${namespace.name}/${module.name}/${module.system}`, version: version.version },
      });
    });
    await this.deps.artifacts.delete(version.storage_key).catch(() => undefined);
  }

  /** Deletes a module with every version and tarball. */
  async deleteModule(actor: UserActor, address: ModuleAddress): Promise<void> {
    const { namespace, module } = await this.find(actor, address, 'registry.manage');
    const versions = await this.deps.uow.run(namespace.scope, async (stores) => {
      const all = await stores.registryModules.listVersions(namespace.ownerId, module.id);
      if (!(await stores.registryModules.delete(namespace.ownerId, module.id))) throw moduleNotFound();
      await recordAudit(stores, this.deps, actor, {
        action: 'module.delete',
        target: { type: 'module', id: module.id },
        owner_id: namespace.ownerId,
        details: { module: `${namespace.name}/${module.name}/${module.system}`, versions: all.length },
      });
      return all;
    });
    for (const version of versions) await this.deps.artifacts.delete(version.storage_key).catch(() => undefined);
  }

  /** The module at `address` in its namespace, once `actor` may do `action` there (`404 module` otherwise). */
  async find(
    actor: RegistryActor,
    address: ModuleAddress,
    action: Parameters<RegistryNamespaces['resolve']>[2],
  ): Promise<FoundModule> {
    const name = requireModuleName(address.name);
    const system = requireModuleSystem(address.system);
    const namespace = await this.namespaces.resolve(actor, address.namespace, action);
    const module = await this.deps.uow.read(namespace.scope, (stores) =>
      stores.registryModules.find(namespace.ownerId, name, system),
    );
    if (!module) throw moduleNotFound();
    return { namespace, module };
  }

  private async findVersion(
    actor: RegistryActor,
    address: ModuleVersionAddress,
    action: Parameters<RegistryNamespaces['resolve']>[2],
  ): Promise<FoundModule & { version: RegistryModuleVersion }> {
    const version = requireModuleVersion(address.version);
    const found = await this.find(actor, address, action);
    const record = await this.deps.uow.read(found.namespace.scope, (stores) =>
      stores.registryModules.getVersion(found.namespace.ownerId, found.module.id, version),
    );
    if (!record) throw versionNotFound();
    return { ...found, version: record };
  }

  /** Streams the tarball into the store and checks it; nothing is kept when it is refused. */
  private async store(key: string, body: AsyncIterable<Uint8Array>, maxBytes: number) {
    try {
      const stored = await this.deps.artifacts.put(key, body, { maxBytes });
      const object = await this.deps.artifacts.get(key);
      await this.deps.tarballs.check(verifiedArtifactBody(key, object.body, object.size, stored), {
        maxUnpackedBytes: MAX_CONFIGURATION_UNPACKED_BYTES,
        maxEntries: MAX_CONFIGURATION_ENTRIES,
        stripComponents: 0,
      });
      return stored;
    } catch (error) {
      await this.deps.artifacts.delete(key).catch(() => undefined);
      throw asModuleError(error, maxBytes);
    }
  }

  private async moduleFor(stores: Stores, ownerId: string, name: string, system: string): Promise<RegistryModule> {
    const found = await stores.registryModules.find(ownerId, name, system);
    if (found) return found;
    const now = isoNow(this.deps);
    return stores.registryModules.create({
      id: this.deps.random.uuid(),
      owner_id: ownerId,
      name,
      system,
      latest_version: null,
      created_at: now,
      updated_at: now,
    });
  }

  private async refreshLatest(stores: Stores, module: RegistryModule): Promise<void> {
    const versions = await stores.registryModules.listVersions(module.owner_id, module.id);
    await stores.registryModules.update({
      ...module,
      latest_version: latestVersion(versions.map((version) => version.version)),
      updated_at: isoNow(this.deps),
    });
  }
}

/** The checker's and the store's refusals, in the registry's words. */
function asModuleError(error: unknown, maxBytes: number): unknown {
  if (!isDomainError(error)) return error;
  if (error instanceof TooLargeError) return moduleTooLarge(maxBytes, error.message);
  if (error instanceof UnprocessableError && error.code === 'configuration_invalid') {
    return new UnprocessableError(
      'module_invalid',
      error.message.replace('the configuration tarball', 'the module tarball'),
      { cause: error },
    );
  }
  return error;
}

function moduleTooLarge(maxBytes: number, detail?: string): TooLargeError {
  return new TooLargeError(
    'module_too_large',
    detail?.replaceAll('configuration', 'module') ?? `the module tarball is larger than the limit of ${maxBytes} bytes`,
    maxBytes,
  );
}

function versionExists(namespace: string, name: string, system: string, version: string): ConflictError {
  return new ConflictError(
    'module_version_exists',
    `${namespace}/${name}/${system} ${version} is already published; a published version never changes (publish a new version)`,
  );
}

function moduleNotFound(): NotFoundError {
  return new NotFoundError('module');
}

function versionNotFound(): NotFoundError {
  return new NotFoundError('module_version');
}

function moduleView(namespace: string, module: RegistryModule): RegistryModuleView {
  return {
    id: module.id,
    namespace,
    name: module.name,
    system: module.system,
    latest_version: module.latest_version,
    created_at: module.created_at,
    updated_at: module.updated_at,
  };
}

function versionView(
  namespace: string,
  name: string,
  system: string,
  version: RegistryModuleVersion,
): RegistryModuleVersionView {
  return {
    id: version.id,
    namespace,
    name,
    system,
    version: version.version,
    size: version.size,
    sha256: version.sha256,
    deprecated: version.deprecated_at !== null,
    deprecated_at: version.deprecated_at,
    deprecation_reason: version.deprecation_reason,
    published_by: version.published_by,
    published_at: version.created_at,
  };
}
