import type {
  MirrorArchive,
  MirrorArchiveAddress,
  MirrorStore,
  Page,
  PageRequest,
  ProviderAddress,
} from '@trellis/core';
import type { SqlSession } from '../dialects/Dialect.js';
import { integerOut, type Row, textOut, timeIn, timeOut, uuidOut, uuidOutOrNull } from '../rows.js';
import { keysetPage } from './keysetPage.js';

/** The provider mirror's archives (m050, `origin` m053); a taken address is `409 mirror_archive_exists` (UNIQUE_KEYS). */
export class SqlMirrorStore implements MirrorStore {
  constructor(private readonly db: SqlSession) {}

  private archivesOf(ownerId: string) {
    return this.db.table('mirror_archives').where({ owner_id: ownerId });
  }

  async insert(archive: MirrorArchive): Promise<MirrorArchive> {
    const [row] = await this.db
      .insert('mirror_archives', {
        id: archive.id,
        owner_id: archive.owner_id,
        hostname: archive.hostname,
        namespace: archive.namespace,
        type: archive.type,
        version: archive.version,
        os: archive.os,
        arch: archive.arch,
        storage_key: archive.storage_key,
        size: archive.size,
        sha256: archive.sha256,
        h1: archive.h1,
        origin: archive.origin,
        created_by: archive.created_by,
        created_at: timeIn(archive.created_at),
      })
      .returning('*');
    return toArchive(row);
  }

  async find(ownerId: string, address: MirrorArchiveAddress): Promise<MirrorArchive | null> {
    const { hostname, namespace, type, version, os, arch } = address;
    const row = await this.archivesOf(ownerId).where({ hostname, namespace, type, version, os, arch }).first();
    return row ? toArchive(row) : null;
  }

  async get(ownerId: string, id: string): Promise<MirrorArchive | null> {
    const row = await this.archivesOf(ownerId).where({ id }).first();
    return row ? toArchive(row) : null;
  }

  async archives(ownerId: string, provider: ProviderAddress, version?: string): Promise<MirrorArchive[]> {
    const { hostname, namespace, type } = provider;
    const query = this.archivesOf(ownerId).where({ hostname, namespace, type });
    if (version !== undefined) query.where({ version });
    const rows: Row[] = await query.orderBy('seq', 'asc');
    return rows.map(toArchive);
  }

  async providers(ownerId: string): Promise<ProviderAddress[]> {
    const rows: Row[] = await this.archivesOf(ownerId)
      .distinct('hostname', 'namespace', 'type')
      .orderBy(['hostname', 'namespace', 'type']);
    return rows.map((row) => ({
      hostname: textOut(row.hostname),
      namespace: textOut(row.namespace),
      type: textOut(row.type),
    }));
  }

  page(ownerId: string, request: PageRequest): Promise<Page<MirrorArchive>> {
    return keysetPage(this.archivesOf(ownerId), 'created_at', request, toArchive);
  }

  async delete(ownerId: string, id: string): Promise<boolean> {
    return Number(await this.archivesOf(ownerId).where({ id }).delete()) === 1;
  }

  async storageKeys(ownerId: string): Promise<string[]> {
    const rows: Row[] = await this.archivesOf(ownerId).select('storage_key');
    return rows.map((row) => textOut(row.storage_key));
  }
}

function toArchive(row: Row): MirrorArchive {
  return {
    id: uuidOut(row.id),
    owner_id: uuidOut(row.owner_id),
    hostname: textOut(row.hostname),
    namespace: textOut(row.namespace),
    type: textOut(row.type),
    version: textOut(row.version),
    os: textOut(row.os),
    arch: textOut(row.arch),
    storage_key: textOut(row.storage_key),
    size: integerOut(row.size),
    sha256: textOut(row.sha256),
    h1: textOut(row.h1),
    origin: textOut(row.origin) === 'pulled' ? 'pulled' : 'pushed',
    created_by: uuidOutOrNull(row.created_by),
    created_at: timeOut(row.created_at),
  };
}
