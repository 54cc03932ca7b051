import type { RegistryGpgKey, RegistryProvider, RegistryProviderPlatform, RegistryProviderVersion } from './records.js';

/** A version with its uploaded platforms, as the lists show it. */
export interface RegistryProviderVersionWithPlatforms extends RegistryProviderVersion {
  platforms: RegistryProviderPlatform[];
}

/**
 * Where the registry's providers, their versions and platforms, and the namespaces' GPG keys are
 * recorded (issue 28); the zips live in the `ArtifactStore`. Every method is limited to one owner.
 * A duplicate (provider type, version, platform, key id) is `ConflictError('duplicate_key')`.
 */
export interface RegistryProviderStore {
  /** The owner's provider of `type`, made now when there is none. */
  ensureProvider(provider: RegistryProvider): Promise<RegistryProvider>;
  getProvider(ownerId: string, type: string): Promise<RegistryProvider | null>;
  /** The owner's providers by type, at most `limit`, after the type `after` (a page). */
  listProviders(ownerId: string, limit: number, after: string | null): Promise<RegistryProvider[]>;

  createVersion(version: RegistryProviderVersion): Promise<RegistryProviderVersion>;
  getVersion(
    ownerId: string,
    providerId: string,
    version: string,
  ): Promise<RegistryProviderVersionWithPlatforms | null>;
  getVersionById(ownerId: string, versionId: string): Promise<RegistryProviderVersionWithPlatforms | null>;
  /** Every version of the provider with its platforms (the protocol's list is whole), oldest first. */
  listVersions(ownerId: string, providerId: string): Promise<RegistryProviderVersionWithPlatforms[]>;
  /** Deletes the version and its platforms; the storage keys of its zips, to delete after. */
  deleteVersion(ownerId: string, versionId: string): Promise<string[]>;

  addPlatform(platform: RegistryProviderPlatform): Promise<RegistryProviderPlatform>;

  addKey(key: RegistryGpgKey): Promise<RegistryGpgKey>;
  listKeys(ownerId: string): Promise<RegistryGpgKey[]>;
  /** False when the owner has no key of that id. */
  deleteKey(ownerId: string, keyId: string): Promise<boolean>;

  /** The artifact keys of every stored zip of the owner (they go when the owner does). */
  storageKeys(ownerId: string): Promise<string[]>;
}

/** What is read of an ASCII-armored OpenPGP public key. */
export interface PgpPublicKeyInfo {
  /** The primary key's id, 16 uppercase hex digits. */
  key_id: string;
  /** The primary key's fingerprint, uppercase hex. */
  fingerprint: string;
}

/**
 * OpenPGP, for the registry's provider signatures (issue 28). `readPublicKey` throws
 * `ValidationError('gpg_key_invalid')` for text that is not one armored public key (a private key
 * included). `verifyDetached` answers the primary key id of the key of `armoredKeys` that made the
 * detached `signature` (binary or armored) over `data`, and the signature in binary form (what the
 * stock CLI reads); null when none of them made it or the signature cannot be read.
 */
export interface PgpVerifier {
  readPublicKey(asciiArmor: string): Promise<PgpPublicKeyInfo>;
  verifyDetached(
    data: Uint8Array,
    signature: Uint8Array,
    armoredKeys: readonly string[],
  ): Promise<{ key_id: string; signature: Uint8Array } | null>;
}
