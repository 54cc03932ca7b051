import type { ConfigurationVersion, ConfigurationVersionStore } from '@trellis/core';
import { NotFoundError } from '@trellis/core';
import type { SqlSession } from '../dialects/Dialect.js';
import {
  booleanOut,
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

const UPDATED = [
  'status',
  'storage_key',
  'sha256',
  'size',
  'error_code',
  'error_message',
  'upload_started_at',
  'updated_at',
] as const;

export class SqlConfigurationVersionStore implements ConfigurationVersionStore {
  constructor(private readonly db: SqlSession) {}

  async save(version: ConfigurationVersion): Promise<ConfigurationVersion> {
    // The vine must be the owner's, or an owner could record a version against another's vine.
    const vine = await this.db.table('vines').where({ owner_id: version.owner_id, id: version.vine_id }).first('id');
    if (!vine) throw new NotFoundError('configuration');
    const [row] = await this.db
      .insert('configuration_versions', {
        id: version.id,
        owner_id: version.owner_id,
        vine_id: version.vine_id,
        source: version.source,
        provider: version.provider,
        repository: version.repository,
        commit_sha: version.commit_sha,
        ref: version.ref,
        status: version.status,
        storage_key: version.storage_key,
        sha256: version.sha256,
        size: version.size,
        strip_components: version.strip_components,
        speculative: version.speculative,
        auto_queue_runs: version.auto_queue_runs,
        provisional: version.provisional,
        upload_started_at: timeInOrNull(version.upload_started_at),
        error_code: version.error_code,
        error_message: version.error_message,
        created_by: version.created_by,
        created_at: timeIn(version.created_at),
        updated_at: timeIn(version.updated_at),
      })
      .onConflict(['id'])
      .merge([...UPDATED])
      .returning('*');
    return toVersion(row);
  }

  async get(ownerId: string, id: string): Promise<ConfigurationVersion | null> {
    const row = await this.db.table('configuration_versions').where({ owner_id: ownerId, id }).first();
    return row ? toVersion(row) : null;
  }

  async findUploaded(ownerId: string, vineId: string, commitSha: string): Promise<ConfigurationVersion | null> {
    const row = await this.db
      .table('configuration_versions')
      .where({ owner_id: ownerId, vine_id: vineId, commit_sha: commitSha, status: 'uploaded' })
      .orderBy('created_at', 'desc')
      .first();
    return row ? toVersion(row) : null;
  }

  async startUpload(ownerId: string, id: string, at: string): Promise<boolean> {
    const changed = await this.db
      .table('configuration_versions')
      .where({ owner_id: ownerId, id, status: 'pending' })
      .whereNull('upload_started_at')
      .update({ upload_started_at: timeIn(at) });
    return Number(changed) === 1;
  }

  async listForVine(ownerId: string, vineId: string, limit: number): Promise<ConfigurationVersion[]> {
    const rows: Row[] = await this.db
      .table('configuration_versions')
      .where({ owner_id: ownerId, vine_id: vineId })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(limit);
    return rows.map(toVersion);
  }

  async storageKeys(ownerId: string): Promise<string[]> {
    const rows: Row[] = await this.db
      .table('configuration_versions')
      .where({ owner_id: ownerId })
      .whereNotNull('storage_key')
      .select('storage_key');
    return toVersionKeys(rows);
  }
}

function toVersionKeys(rows: Row[]): string[] {
  return rows.map((row) => textOut(row.storage_key));
}

function toVersion(row: Row): ConfigurationVersion {
  return {
    id: uuidOut(row.id),
    owner_id: uuidOut(row.owner_id),
    vine_id: uuidOut(row.vine_id),
    source: textOut(row.source) as ConfigurationVersion['source'],
    provider: textOutOrNull(row.provider) as ConfigurationVersion['provider'],
    repository: textOutOrNull(row.repository),
    commit_sha: textOutOrNull(row.commit_sha),
    ref: textOutOrNull(row.ref),
    status: textOut(row.status) as ConfigurationVersion['status'],
    storage_key: textOutOrNull(row.storage_key),
    sha256: textOutOrNull(row.sha256),
    size: row.size === null || row.size === undefined ? null : integerOut(row.size),
    strip_components: integerOut(row.strip_components),
    speculative: booleanOut(row.speculative),
    auto_queue_runs: booleanOut(row.auto_queue_runs),
    provisional: booleanOut(row.provisional),
    upload_started_at: timeOutOrNull(row.upload_started_at),
    error_code: textOutOrNull(row.error_code),
    error_message: textOutOrNull(row.error_message),
    created_by: uuidOutOrNull(row.created_by),
    created_at: timeOut(row.created_at),
    updated_at: timeOut(row.updated_at),
  };
}
