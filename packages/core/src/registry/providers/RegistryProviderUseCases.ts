import type { Readable } from 'node:stream';
import { verifiedArtifactBody } from '../../artifacts/VerifiedBody.js';
import type { UserActor } from '../../domain/actors.js';
import {
  ConflictError,
  NotFoundError,
  TooLargeError,
  UnprocessableError,
  ValidationError,
} from '../../domain/errors.js';
import { ownerScope } from '../../ports/UnitOfWork.js';
import { recordAudit } from '../../usecases/audit.js';
import { type CoreDeps, isoNow } from '../../usecases/CoreDeps.js';
import { RegistryNamespaces } from '../namespaces.js';
import type { RegistryProviderVersionWithPlatforms } from './ports.js';
import {
  parseShasums,
  platformsInShasums,
  providerZipKey,
  providerZipName,
  type RegistryGpgKey,
  type RegistryProviderPlatform,
  type RegistryProviderVersion,
  requirePlatformPart,
  requireProtocols,
  requireProviderType,
  requireProviderVersion,
} from './records.js';

/** A `SHA256SUMS` file and its signature are small: a few lines, a few hundred bytes. */
export const MAX_SHASUMS_BYTES = 64 * 1024;
export const MAX_SIGNATURE_BYTES = 16 * 1024;

/** What publishing a version sends first: the zips follow, one `uploadPlatform` each. */
export interface NewProviderVersion {
  protocols: unknown;
  /** The `SHA256SUMS` file, as text. */
  shasums: unknown;
  /** Its detached signature, base64 (of the binary or the armored signature). */
  shasums_signature: unknown;
}

/** A version as Trellis's API shows it: the platforms `SHA256SUMS` lists, and whether each is uploaded. */
export interface ProviderVersionView {
  namespace: string;
  type: string;
  version: string;
  protocols: string[];
  key_id: string;
  created_at: string;
  platforms: { os: string; arch: string; filename: string; shasum: string; uploaded: boolean }[];
}

/** Where a platform is downloaded from: what the protocol's download answer is made of. */
export interface ProviderDownload {
  owner_id: string;
  version: RegistryProviderVersion;
  platform: RegistryProviderPlatform;
  keys: RegistryGpgKey[];
}

/** The files of a version a signed URL serves. */
export type ProviderFile = { kind: 'zip'; os: string; arch: string } | { kind: 'shasums' } | { kind: 'signature' };

/**
 * Private providers (issue 28): publishing a version checks its `SHA256SUMS` signature against
 * the namespace's GPG keys (none made it: `422 provider_signature_invalid`, nothing recorded), then
 * each platform's zip streams into the artifact store and is kept only if its sha256 is the one
 * `SHA256SUMS` lists. Reading needs `registry.read` of the namespace, publishing
 * `registry.publish`, deleting `registry.manage`; every change is audited.
 */
export class RegistryProviderUseCases {
  private readonly namespaces: RegistryNamespaces;

  constructor(private readonly deps: CoreDeps) {
    this.namespaces = new RegistryNamespaces(deps);
  }

  /** `POST /api/registry/providers/{namespace}/{type}/versions/{version}`. */
  async publish(
    actor: UserActor,
    namespace: string,
    typeInput: unknown,
    versionInput: unknown,
    input: NewProviderVersion,
  ): Promise<ProviderVersionView> {
    const type = requireProviderType(typeInput);
    const versionName = requireProviderVersion(versionInput);
    const protocols = requireProtocols(input.protocols);
    const shasums = requireText(input.shasums, 'shasums', MAX_SHASUMS_BYTES);
    const signature = requireBase64(input.shasums_signature, 'shasums_signature', MAX_SIGNATURE_BYTES);
    const listed = platformsInShasums(parseShasums(shasums), type, versionName);
    if (listed.length === 0) {
      throw new UnprocessableError(
        'provider_shasums_invalid',
        `SHA256SUMS lists no ${providerZipName(type, versionName, '<os>', '<arch>')}`,
      );
    }
    const { ownerId, scope } = await this.namespaces.resolve(actor, namespace, 'registry.publish');
    const keys = await this.deps.uow.read(scope, (stores) => stores.registryProviders.listKeys(ownerId));
    if (keys.length === 0) {
      throw new UnprocessableError(
        'provider_signature_invalid',
        `namespace ${namespace} has no GPG key to check the signature with; an admin adds one (trellis gpg-keys add)`,
      );
    }
    const verified = await this.deps.pgp.verifyDetached(
      Buffer.from(shasums, 'utf8'),
      signature,
      keys.map((key) => key.ascii_armor),
    );
    if (!verified) {
      throw new UnprocessableError(
        'provider_signature_invalid',
        `the signature of SHA256SUMS was not made by any GPG key of namespace ${namespace} (${keys.map((key) => key.key_id).join(', ')})`,
      );
    }
    const now = isoNow(this.deps);
    const saved = await this.deps.uow.run(scope, async (stores) => {
      const provider = await stores.registryProviders.ensureProvider({
        id: this.deps.random.uuid(),
        owner_id: ownerId,
        type,
        created_by: actor.userId,
        created_at: now,
      });
      if (await stores.registryProviders.getVersion(ownerId, provider.id, versionName)) {
        throw new ConflictError(
          'provider_version_exists',
          `${namespace}/${type} ${versionName} is already published; a version never changes (publish another)`,
        );
      }
      const version = await stores.registryProviders.createVersion({
        id: this.deps.random.uuid(),
        owner_id: ownerId,
        provider_id: provider.id,
        version: versionName,
        protocols,
        shasums,
        shasums_signature: verified.signature,
        key_id: verified.key_id,
        created_by: actor.userId,
        created_at: now,
      });
      await recordAudit(stores, this.deps, actor, {
        action: 'provider_version.publish',
        target: { type: 'provider_version', id: version.id },
        owner_id: ownerId,
        details: { provider: `${namespace}/${type}`, version: versionName, key_id: verified.key_id },
      });
      return version;
    });
    return view(namespace, type, { ...saved, platforms: [] });
  }

  /**
   * `PUT …/versions/{version}/platforms/{os}/{arch}`: the zip, streamed into the artifact store
   * (at most `maxProviderZipBytes`), kept when its sha256 is the one `SHA256SUMS` lists for it.
   */
  async uploadPlatform(
    actor: UserActor,
    namespace: string,
    typeInput: unknown,
    versionInput: unknown,
    osInput: unknown,
    archInput: unknown,
    body: AsyncIterable<Uint8Array>,
  ): Promise<ProviderVersionView> {
    const os = requirePlatformPart(osInput, 'os');
    const arch = requirePlatformPart(archInput, 'arch');
    const found = await this.find(actor, namespace, typeInput, versionInput, 'registry.publish');
    const { ownerId, type, version } = found;
    const filename = providerZipName(type, version.version, os, arch);
    const expected = parseShasums(version.shasums).get(filename);
    if (!expected) {
      throw new UnprocessableError(
        'provider_platform_not_listed',
        `the SHA256SUMS of ${namespace}/${type} ${version.version} does not list ${filename}`,
      );
    }
    if (version.platforms.some((platform) => platform.os === os && platform.arch === arch)) {
      throw new ConflictError('provider_platform_exists', `${filename} is already uploaded; a version never changes`);
    }
    const key = providerZipKey(ownerId, version.id, filename);
    const limit = this.deps.settings.registry.providerMaxBytes;
    const stored = await this.deps.artifacts.put(key, body, { maxBytes: limit }).catch((error: unknown) => {
      if (!(error instanceof TooLargeError)) throw error;
      throw new TooLargeError(
        'provider_zip_too_large',
        `${filename} is larger than the limit of ${limit} bytes`,
        limit,
      );
    });
    if (stored.sha256 !== expected) {
      await this.deps.artifacts.delete(key).catch(() => undefined);
      throw new UnprocessableError(
        'provider_shasum_mismatch',
        `${filename} has sha256 ${stored.sha256}, but SHA256SUMS lists ${expected}`,
      );
    }
    const platform = await this.deps.uow.run(found.scope, async (stores) => {
      const saved = await stores.registryProviders.addPlatform({
        id: this.deps.random.uuid(),
        owner_id: ownerId,
        version_id: version.id,
        os,
        arch,
        filename,
        shasum: stored.sha256,
        size: stored.size,
        storage_key: key,
        created_by: actor.userId,
        created_at: isoNow(this.deps),
      });
      await recordAudit(stores, this.deps, actor, {
        action: 'provider_platform.upload',
        target: { type: 'provider_version', id: version.id },
        owner_id: ownerId,
        details: { provider: `${namespace}/${type}`, version: version.version, os, arch, sha256: stored.sha256 },
      });
      return saved;
    });
    return view(namespace, type, { ...version, platforms: [...version.platforms, platform] });
  }

  /** `GET /api/registry/providers/{namespace}`: the namespace's provider types, a page at a time. */
  async list(
    actor: UserActor,
    namespace: string,
    limit: number,
    after: string | null,
  ): Promise<{ providers: { type: string; created_at: string }[]; next: string | null }> {
    const { ownerId, scope } = await this.namespaces.resolve(actor, namespace, 'registry.read');
    const page = await this.deps.uow.read(scope, (stores) =>
      stores.registryProviders.listProviders(ownerId, limit + 1, after),
    );
    const providers = page
      .slice(0, limit)
      .map((provider) => ({ type: provider.type, created_at: provider.created_at }));
    return { providers, next: page.length > limit ? (providers.at(-1)?.type ?? null) : null };
  }

  /** Every version of a provider with its platforms (`providers.v1` `…/versions` and the API). */
  async versions(actor: UserActor, namespace: string, typeInput: unknown): Promise<ProviderVersionView[]> {
    const type = requireProviderType(typeInput);
    const { ownerId, scope } = await this.namespaces.resolve(actor, namespace, 'registry.read');
    const versions = await this.deps.uow.read(scope, async (stores) => {
      const provider = await stores.registryProviders.getProvider(ownerId, type);
      if (!provider) throw new NotFoundError('provider', 'provider_not_found', `no provider ${namespace}/${type}`);
      return stores.registryProviders.listVersions(ownerId, provider.id);
    });
    return versions.map((version) => view(namespace, type, version));
  }

  /** The protocol's `…/{version}/download/{os}/{arch}`: the platform and the namespace's keys. */
  async download(
    actor: UserActor,
    namespace: string,
    typeInput: unknown,
    versionInput: unknown,
    osInput: unknown,
    archInput: unknown,
  ): Promise<ProviderDownload> {
    const os = requirePlatformPart(osInput, 'os');
    const arch = requirePlatformPart(archInput, 'arch');
    const found = await this.find(actor, namespace, typeInput, versionInput, 'registry.read');
    const platform = found.version.platforms.find((candidate) => candidate.os === os && candidate.arch === arch);
    if (!platform) {
      throw new NotFoundError(
        'provider_platform',
        'provider_platform_not_found',
        `${namespace}/${found.type} ${found.version.version} has no build for ${os}_${arch}`,
      );
    }
    const keys = await this.deps.uow.read(found.scope, (stores) => stores.registryProviders.listKeys(found.ownerId));
    return { owner_id: found.ownerId, version: found.version, platform, keys };
  }

  /**
   * A file of a version, for its signed URL (no actor: the URL's signature, checked by the caller,
   * is the credential): a zip read through its digest, `SHA256SUMS`, or its binary signature.
   */
  async openFile(
    ownerId: string,
    versionId: string,
    file: ProviderFile,
  ): Promise<{ body: Readable | Uint8Array; size: number; filename: string }> {
    const version = await this.deps.uow.read(ownerScope(ownerId), (stores) =>
      stores.registryProviders.getVersionById(ownerId, versionId),
    );
    if (!version) throw new NotFoundError('provider_version', 'provider_version_not_found');
    if (file.kind === 'shasums') {
      const bytes = Buffer.from(version.shasums, 'utf8');
      return { body: bytes, size: bytes.length, filename: 'SHA256SUMS' };
    }
    if (file.kind === 'signature') {
      return { body: version.shasums_signature, size: version.shasums_signature.length, filename: 'SHA256SUMS.sig' };
    }
    const platform = version.platforms.find((candidate) => candidate.os === file.os && candidate.arch === file.arch);
    if (!platform) throw new NotFoundError('provider_platform', 'provider_platform_not_found');
    const object = await this.deps.artifacts.get(platform.storage_key);
    const digest = { size: platform.size, sha256: platform.shasum };
    return {
      body: verifiedArtifactBody(platform.storage_key, object.body, object.size, digest),
      size: platform.size,
      filename: platform.filename,
    };
  }

  /** `DELETE …/versions/{version}` (admins): the version, its platforms, then its zips. */
  async deleteVersion(actor: UserActor, namespace: string, typeInput: unknown, versionInput: unknown): Promise<void> {
    const found = await this.find(actor, namespace, typeInput, versionInput, 'registry.manage');
    const keys = await this.deps.uow.run(found.scope, async (stores) => {
      const deleted = await stores.registryProviders.deleteVersion(found.ownerId, found.version.id);
      await recordAudit(stores, this.deps, actor, {
        action: 'provider_version.delete',
        target: { type: 'provider_version', id: found.version.id },
        owner_id: found.ownerId,
        details: { provider: `${namespace}/${found.type}`, version: found.version.version },
      });
      return deleted;
    });
    for (const key of keys) {
      // The rows are gone; a zip left behind is unreachable, and an operator may sweep it.
      await this.deps.artifacts.delete(key).catch(() => undefined);
    }
  }

  private async find(
    actor: UserActor,
    namespace: string,
    typeInput: unknown,
    versionInput: unknown,
    action: 'registry.read' | 'registry.publish' | 'registry.manage',
  ) {
    const type = requireProviderType(typeInput);
    const versionName = requireProviderVersion(versionInput);
    const { ownerId, scope } = await this.namespaces.resolve(actor, namespace, action);
    const version = await this.deps.uow.read(scope, async (stores) => {
      const provider = await stores.registryProviders.getProvider(ownerId, type);
      const found = provider && (await stores.registryProviders.getVersion(ownerId, provider.id, versionName));
      if (!found) {
        throw new NotFoundError(
          'provider_version',
          'provider_version_not_found',
          `no version ${versionName} of provider ${namespace}/${type}`,
        );
      }
      return found;
    });
    return { ownerId, scope, type, version };
  }
}

function view(namespace: string, type: string, version: RegistryProviderVersionWithPlatforms): ProviderVersionView {
  const uploaded = new Set(version.platforms.map((platform) => `${platform.os}_${platform.arch}`));
  return {
    namespace,
    type,
    version: version.version,
    protocols: version.protocols,
    key_id: version.key_id,
    created_at: version.created_at,
    platforms: platformsInShasums(parseShasums(version.shasums), type, version.version).map((platform) => ({
      ...platform,
      uploaded: uploaded.has(`${platform.os}_${platform.arch}`),
    })),
  };
}

function requireText(value: unknown, path: string, maxBytes: number): string {
  if (typeof value !== 'string' || value.length === 0 || Buffer.byteLength(value, 'utf8') > maxBytes) {
    throw new ValidationError(`${path} must be the file's text, at most ${maxBytes} bytes`, [
      { path, message: `must be a non-empty string of at most ${maxBytes} bytes` },
    ]);
  }
  return value;
}

function requireBase64(value: unknown, path: string, maxBytes: number): Uint8Array {
  const bytes = typeof value === 'string' && /^[A-Za-z0-9+/]+={0,2}$/.test(value) ? Buffer.from(value, 'base64') : null;
  if (!bytes || bytes.length === 0 || bytes.length > maxBytes) {
    throw new ValidationError(`${path} must be the signature file in base64, at most ${maxBytes} bytes`, [
      { path, message: 'must be base64' },
    ]);
  }
  return bytes;
}
