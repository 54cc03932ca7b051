import type {
  RegistryGpgKey,
  RegistryProvider,
  RegistryProviderPlatform,
  RegistryProviderStore,
  RegistryProviderVersion,
  RegistryProviderVersionWithPlatforms,
} from '@trellis/core';
import type { SqlSession } from '../dialects/Dialect.js';
import { integerOut, jsonIn, jsonOut, type Row, textOut, timeIn, timeOut, uuidOut } from '../rows.js';

/** The registry's providers, versions, platforms and GPG keys (issue 28, m049). */
export class SqlRegistryProviderStore implements RegistryProviderStore {
  constructor(private readonly db: SqlSession) {}

  async ensureProvider(provider: RegistryProvider): Promise<RegistryProvider> {
    await this.db
      .insert('registry_providers', {
        id: provider.id,
        owner_id: provider.owner_id,
        type: provider.type,
        created_by: provider.created_by,
        created_at: timeIn(provider.created_at),
      })
      .onConflict(['owner_id', 'type'])
      .ignore();
    const found = await this.getProvider(provider.owner_id, provider.type);
    if (!found) throw new Error(`the provider ${provider.type} was neither made nor found`);
    return found;
  }

  async getProvider(ownerId: string, type: string): Promise<RegistryProvider | null> {
    const row = await this.db.table('registry_providers').where({ owner_id: ownerId, type }).first();
    return row ? toProvider(row) : null;
  }

  async listProviders(ownerId: string, limit: number, after: string | null): Promise<RegistryProvider[]> {
    const query = this.db.table('registry_providers').where({ owner_id: ownerId }).orderBy('type').limit(limit);
    if (after !== null) query.where('type', '>', after);
    const rows: Row[] = await query;
    return rows.map(toProvider);
  }

  async createVersion(version: RegistryProviderVersion): Promise<RegistryProviderVersion> {
    const [row] = await this.db.recoverable((db) =>
      db
        .insert('registry_provider_versions', {
          id: version.id,
          owner_id: version.owner_id,
          provider_id: version.provider_id,
          version: version.version,
          protocols: jsonIn(version.protocols),
          shasums: version.shasums,
          shasums_signature: Buffer.from(version.shasums_signature).toString('base64'),
          key_id: version.key_id,
          created_by: version.created_by,
          created_at: timeIn(version.created_at),
        })
        .returning('*'),
    );
    return toVersion(row);
  }

  async getVersion(
    ownerId: string,
    providerId: string,
    version: string,
  ): Promise<RegistryProviderVersionWithPlatforms | null> {
    const row = await this.db
      .table('registry_provider_versions')
      .where({ owner_id: ownerId, provider_id: providerId, version })
      .first();
    return row ? this.withPlatforms(ownerId, [toVersion(row)]).then(([found]) => found ?? null) : null;
  }

  async getVersionById(ownerId: string, versionId: string): Promise<RegistryProviderVersionWithPlatforms | null> {
    const row = await this.db.table('registry_provider_versions').where({ owner_id: ownerId, id: versionId }).first();
    return row ? this.withPlatforms(ownerId, [toVersion(row)]).then(([found]) => found ?? null) : null;
  }

  async listVersions(ownerId: string, providerId: string): Promise<RegistryProviderVersionWithPlatforms[]> {
    const rows: Row[] = await this.db
      .table('registry_provider_versions')
      .where({ owner_id: ownerId, provider_id: providerId })
      .orderBy([
        { column: 'created_at', order: 'asc' },
        { column: 'id', order: 'asc' },
      ]);
    return this.withPlatforms(ownerId, rows.map(toVersion));
  }

  async deleteVersion(ownerId: string, versionId: string): Promise<string[]> {
    const rows: Row[] = await this.db
      .table('registry_provider_platforms')
      .where({ owner_id: ownerId, version_id: versionId })
      .select('storage_key');
    await this.db.table('registry_provider_platforms').where({ owner_id: ownerId, version_id: versionId }).delete();
    await this.db.table('registry_provider_versions').where({ owner_id: ownerId, id: versionId }).delete();
    return rows.map((row) => textOut(row.storage_key));
  }

  async addPlatform(platform: RegistryProviderPlatform): Promise<RegistryProviderPlatform> {
    const [row] = await this.db.recoverable((db) =>
      db
        .insert('registry_provider_platforms', {
          id: platform.id,
          owner_id: platform.owner_id,
          version_id: platform.version_id,
          os: platform.os,
          arch: platform.arch,
          filename: platform.filename,
          shasum: platform.shasum,
          size: platform.size,
          storage_key: platform.storage_key,
          created_by: platform.created_by,
          created_at: timeIn(platform.created_at),
        })
        .returning('*'),
    );
    return toPlatform(row);
  }

  async addKey(key: RegistryGpgKey): Promise<RegistryGpgKey> {
    const [row] = await this.db.recoverable((db) =>
      db
        .insert('registry_gpg_keys', {
          id: key.id,
          owner_id: key.owner_id,
          key_id: key.key_id,
          ascii_armor: key.ascii_armor,
          created_by: key.created_by,
          created_at: timeIn(key.created_at),
        })
        .returning('*'),
    );
    return toKey(row);
  }

  async listKeys(ownerId: string): Promise<RegistryGpgKey[]> {
    const rows: Row[] = await this.db
      .table('registry_gpg_keys')
      .where({ owner_id: ownerId })
      .orderBy([
        { column: 'created_at', order: 'asc' },
        { column: 'key_id', order: 'asc' },
      ]);
    return rows.map(toKey);
  }

  async deleteKey(ownerId: string, keyId: string): Promise<boolean> {
    const count = await this.db.table('registry_gpg_keys').where({ owner_id: ownerId, key_id: keyId }).delete();
    return Number(count) > 0;
  }

  async storageKeys(ownerId: string): Promise<string[]> {
    const rows: Row[] = await this.db
      .table('registry_provider_platforms')
      .where({ owner_id: ownerId })
      .orderBy('storage_key')
      .select('storage_key');
    return rows.map((row) => textOut(row.storage_key));
  }

  private async withPlatforms(
    ownerId: string,
    versions: RegistryProviderVersion[],
  ): Promise<RegistryProviderVersionWithPlatforms[]> {
    if (versions.length === 0) return [];
    const rows: Row[] = await this.db
      .table('registry_provider_platforms')
      .where({ owner_id: ownerId })
      .whereIn(
        'version_id',
        versions.map((version) => version.id),
      )
      .orderBy([
        { column: 'os', order: 'asc' },
        { column: 'arch', order: 'asc' },
      ]);
    const platforms = rows.map(toPlatform);
    return versions.map((version) => ({
      ...version,
      platforms: platforms.filter((platform) => platform.version_id === version.id),
    }));
  }
}

function toProvider(row: Row): RegistryProvider {
  return {
    id: uuidOut(row.id),
    owner_id: uuidOut(row.owner_id),
    type: textOut(row.type),
    created_by: uuidOut(row.created_by),
    created_at: timeOut(row.created_at),
  };
}

function toVersion(row: Row | undefined): RegistryProviderVersion {
  if (!row) throw new Error('the insert returned no row');
  return {
    id: uuidOut(row.id),
    owner_id: uuidOut(row.owner_id),
    provider_id: uuidOut(row.provider_id),
    version: textOut(row.version),
    protocols: jsonOut<string[]>(row.protocols),
    shasums: textOut(row.shasums),
    shasums_signature: new Uint8Array(Buffer.from(textOut(row.shasums_signature), 'base64')),
    key_id: textOut(row.key_id),
    created_by: uuidOut(row.created_by),
    created_at: timeOut(row.created_at),
  };
}

function toPlatform(row: Row | undefined): RegistryProviderPlatform {
  if (!row) throw new Error('the insert returned no row');
  return {
    id: uuidOut(row.id),
    owner_id: uuidOut(row.owner_id),
    version_id: uuidOut(row.version_id),
    os: textOut(row.os),
    arch: textOut(row.arch),
    filename: textOut(row.filename),
    shasum: textOut(row.shasum),
    size: integerOut(row.size),
    storage_key: textOut(row.storage_key),
    created_by: uuidOut(row.created_by),
    created_at: timeOut(row.created_at),
  };
}

function toKey(row: Row | undefined): RegistryGpgKey {
  if (!row) throw new Error('the insert returned no row');
  return {
    id: uuidOut(row.id),
    owner_id: uuidOut(row.owner_id),
    key_id: textOut(row.key_id),
    ascii_armor: textOut(row.ascii_armor),
    created_by: uuidOut(row.created_by),
    created_at: timeOut(row.created_at),
  };
}
