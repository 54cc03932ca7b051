import type { Page, PageRequest } from '../../domain/pagination.js';
import type { RegistryModule, RegistryModuleVersion } from './records.js';

/** Where registry modules and their versions are recorded; their bytes live in the `ArtifactStore`. */
export interface RegistryModuleStore {
  /** The owner's module `name`/`system`, or null. */
  find(ownerId: string, name: string, system: string): Promise<RegistryModule | null>;
  /** Inserts a module; `ConflictError` when the owner has one of that name and system. */
  create(module: RegistryModule): Promise<RegistryModule>;
  /** Sets `latest_version` and `updated_at`; null when the module is gone. */
  update(module: RegistryModule): Promise<RegistryModule | null>;
  /** The owner's modules, newest first. */
  page(ownerId: string, request: PageRequest): Promise<Page<RegistryModule>>;
  /** Deletes a module and every version record of it; false when there was none. */
  delete(ownerId: string, id: string): Promise<boolean>;

  /** Inserts a version; `ConflictError` when the module has that version already. */
  createVersion(version: RegistryModuleVersion): Promise<RegistryModuleVersion>;
  getVersion(ownerId: string, moduleId: string, version: string): Promise<RegistryModuleVersion | null>;
  getVersionById(ownerId: string, id: string): Promise<RegistryModuleVersion | null>;
  /** Every version of the module, oldest first. */
  listVersions(ownerId: string, moduleId: string): Promise<RegistryModuleVersion[]>;
  /** Sets or clears (`at` null) a version's deprecation; null when the version is gone. */
  setDeprecation(
    ownerId: string,
    id: string,
    at: string | null,
    reason: string | null,
  ): Promise<RegistryModuleVersion | null>;
  deleteVersion(ownerId: string, id: string): Promise<boolean>;
  /** The artifact keys of every version of the owner (their tarballs go when the owner does). */
  storageKeys(ownerId: string): Promise<string[]>;
}
