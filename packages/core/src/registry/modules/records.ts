import { ValidationError } from '../../domain/errors.js';

/**
 * A module of the private registry (issue 28): `<namespace>/<name>/<system>`, the namespace
 * being its owner's (an organization, or a person). Its versions are immutable tarballs.
 */
export interface RegistryModule {
  id: string;
  owner_id: string;
  name: string;
  system: string;
  /** The highest published version (`latestVersion`), null once every version is deleted. */
  latest_version: string | null;
  created_at: string;
  updated_at: string;
}

/** One published version: its bytes are in the artifact store under `storage_key`, never changed. */
export interface RegistryModuleVersion {
  id: string;
  owner_id: string;
  module_id: string;
  version: string;
  storage_key: string;
  size: number;
  sha256: string;
  /** Set while the version is deprecated (still installable; the CLI is told to move on). */
  deprecated_at: string | null;
  deprecation_reason: string | null;
  published_by: string | null;
  created_at: string;
}

/** A module as the API answers it. */
export interface RegistryModuleView {
  id: string;
  namespace: string;
  name: string;
  system: string;
  latest_version: string | null;
  created_at: string;
  updated_at: string;
}

/** A version as the API answers it. */
export interface RegistryModuleVersionView {
  id: string;
  namespace: string;
  name: string;
  system: string;
  version: string;
  size: number;
  sha256: string;
  deprecated: boolean;
  deprecated_at: string | null;
  deprecation_reason: string | null;
  published_by: string | null;
  published_at: string;
}

/** A module's address in its namespace, as a person or the CLI types it. */
export interface ModuleAddress {
  namespace: unknown;
  name: unknown;
  system: unknown;
}

export interface ModuleVersionAddress extends ModuleAddress {
  version: unknown;
}

/** The registry protocol's rule for a module name (lowercased: names are case-insensitive). */
const MODULE_NAME = /^[0-9a-z](?:[0-9a-z_-]{0,62}[0-9a-z])?$/;
/** …and for its target system (the provider it is for: `aws`, `google`). */
const MODULE_SYSTEM = /^[0-9a-z]{1,64}$/;

export function requireModuleName(value: unknown, field = 'name'): string {
  const name = typeof value === 'string' ? value.toLowerCase() : '';
  if (!MODULE_NAME.test(name)) {
    throw new ValidationError(`${field} must be a module name such as vpc`, [
      { path: field, message: `${JSON.stringify(value)} is not 1 to 64 letters, digits, "-" or "_"` },
    ]);
  }
  return name;
}

export function requireModuleSystem(value: unknown, field = 'system'): string {
  const system = typeof value === 'string' ? value.toLowerCase() : '';
  if (!MODULE_SYSTEM.test(system)) {
    throw new ValidationError(`${field} must be the module's target system (its main provider), such as aws`, [
      { path: field, message: `${JSON.stringify(value)} is not 1 to 64 letters or digits` },
    ]);
  }
  return system;
}

/** Where a version's tarball is kept in the artifact store. */
export function moduleVersionKey(ownerId: string, versionId: string): string {
  return `registry/modules/${ownerId}/${versionId}.tar.gz`;
}

/** How long a deprecation reason may be. */
export const MAX_DEPRECATION_REASON = 1000;
