import {
  NotFoundError,
  type Page,
  type PageRequest,
  type RegistryModule,
  type RegistryModuleStore,
  type RegistryModuleVersion,
} from '@trellis/core';
import type { SqlSession } from '../dialects/Dialect.js';
import {
  integerOut,
  type Row,
  textOut,
  textOutOrNull,
  timeIn,
  timeInOrNull,
  timeOut,
  timeOutOrNull,
  uuidOut,
  uuidOutOrNull,
} from '../rows.js';
import { keysetPage } from './keysetPage.js';

/** Registry modules and their versions (m048). */
export class SqlRegistryModuleStore implements RegistryModuleStore {
  constructor(private readonly db: SqlSession) {}

  async find(ownerId: string, name: string, system: string): Promise<RegistryModule | null> {
    const row = await this.db.table('registry_modules').where({ owner_id: ownerId, name, system }).first();
    return row ? toModule(row) : null;
  }

  async create(module: RegistryModule): Promise<RegistryModule> {
    const [row] = await this.db
      .insert('registry_modules', {
        id: module.id,
        owner_id: module.owner_id,
        name: module.name,
        system: module.system,
        latest_version: module.latest_version,
        created_at: timeIn(module.created_at),
        updated_at: timeIn(module.updated_at),
      })
      .returning('*');
    return toModule(row);
  }

  async update(module: RegistryModule): Promise<RegistryModule | null> {
    const [row] = await this.db
      .table('registry_modules')
      .where({ owner_id: module.owner_id, id: module.id })
      .update({ latest_version: module.latest_version, updated_at: timeIn(module.updated_at) })
      .returning('*');
    return row ? toModule(row) : null;
  }

  page(ownerId: string, request: PageRequest): Promise<Page<RegistryModule>> {
    return keysetPage(this.db.table('registry_modules').where({ owner_id: ownerId }), 'created_at', request, toModule);
  }

  async delete(ownerId: string, id: string): Promise<boolean> {
    // Versions first: SQLite enforces the cascade only with foreign keys on.
    await this.db.table('registry_module_versions').where({ owner_id: ownerId, module_id: id }).delete();
    return (await this.db.table('registry_modules').where({ owner_id: ownerId, id }).delete()) > 0;
  }

  async createVersion(version: RegistryModuleVersion): Promise<RegistryModuleVersion> {
    // The module must be the owner's, or an owner could add a version to another's module.
    const module = await this.db
      .table('registry_modules')
      .where({ owner_id: version.owner_id, id: version.module_id })
      .first('id');
    if (!module) throw new NotFoundError('module');
    const [row] = await this.db
      .insert('registry_module_versions', {
        id: version.id,
        owner_id: version.owner_id,
        module_id: version.module_id,
        version: version.version,
        storage_key: version.storage_key,
        size: version.size,
        sha256: version.sha256,
        deprecated_at: timeInOrNull(version.deprecated_at),
        deprecation_reason: version.deprecation_reason,
        published_by: version.published_by,
        created_at: timeIn(version.created_at),
      })
      .returning('*');
    return toVersion(row);
  }

  async getVersion(ownerId: string, moduleId: string, version: string): Promise<RegistryModuleVersion | null> {
    const row = await this.db
      .table('registry_module_versions')
      .where({ owner_id: ownerId, module_id: moduleId, version })
      .first();
    return row ? toVersion(row) : null;
  }

  async getVersionById(ownerId: string, id: string): Promise<RegistryModuleVersion | null> {
    const row = await this.db.table('registry_module_versions').where({ owner_id: ownerId, id }).first();
    return row ? toVersion(row) : null;
  }

  async listVersions(ownerId: string, moduleId: string): Promise<RegistryModuleVersion[]> {
    const rows: Row[] = await this.db
      .table('registry_module_versions')
      .where({ owner_id: ownerId, module_id: moduleId })
      .orderBy([
        { column: 'created_at', order: 'asc' },
        { column: 'id', order: 'asc' },
      ]);
    return rows.map(toVersion);
  }

  async setDeprecation(
    ownerId: string,
    id: string,
    at: string | null,
    reason: string | null,
  ): Promise<RegistryModuleVersion | null> {
    const [row] = await this.db
      .table('registry_module_versions')
      .where({ owner_id: ownerId, id })
      .update({ deprecated_at: timeInOrNull(at), deprecation_reason: reason })
      .returning('*');
    return row ? toVersion(row) : null;
  }

  async deleteVersion(ownerId: string, id: string): Promise<boolean> {
    return (await this.db.table('registry_module_versions').where({ owner_id: ownerId, id }).delete()) > 0;
  }

  async storageKeys(ownerId: string): Promise<string[]> {
    const rows: Row[] = await this.db
      .table('registry_module_versions')
      .where({ owner_id: ownerId })
      .orderBy('id')
      .select('storage_key');
    return rows.map((row) => textOut(row.storage_key));
  }
}

function toModule(row: Row): RegistryModule {
  return {
    id: uuidOut(row.id),
    owner_id: uuidOut(row.owner_id),
    name: textOut(row.name),
    system: textOut(row.system),
    latest_version: textOutOrNull(row.latest_version),
    created_at: timeOut(row.created_at),
    updated_at: timeOut(row.updated_at),
  };
}

function toVersion(row: Row): RegistryModuleVersion {
  return {
    id: uuidOut(row.id),
    owner_id: uuidOut(row.owner_id),
    module_id: uuidOut(row.module_id),
    version: textOut(row.version),
    storage_key: textOut(row.storage_key),
    size: integerOut(row.size),
    sha256: textOut(row.sha256),
    deprecated_at: timeOutOrNull(row.deprecated_at),
    deprecation_reason: textOutOrNull(row.deprecation_reason),
    published_by: uuidOutOrNull(row.published_by),
    created_at: timeOut(row.created_at),
  };
}
