import {
  GIT_PROVIDERS,
  isOneOf,
  type ModuleRepository,
  type ModuleRepositoryStore,
  type ModuleTagResult,
  WEBHOOK_MODES,
} from '@trellis/core';
import type { SqlSession } from '../dialects/Dialect.js';
import { type Row, textOut, textOutOrNull, timeIn, timeOut, uuidOut } from '../rows.js';

/** Modules published from git tags (m051). */
export class SqlModuleRepositoryStore implements ModuleRepositoryStore {
  constructor(private readonly db: SqlSession) {}

  async put(connection: ModuleRepository): Promise<ModuleRepository> {
    const row = {
      id: connection.id,
      owner_id: connection.owner_id,
      name: connection.name,
      system: connection.system,
      provider: connection.provider,
      repository: connection.repository,
      webhook_mode: connection.webhook_mode,
      hook_id: connection.hook_id,
      webhook_secret_sealed: connection.webhook_secret_sealed,
      connected_by: connection.connected_by,
      last_tag: connection.last_tag === null ? null : JSON.stringify(connection.last_tag),
      created_at: timeIn(connection.created_at),
      updated_at: timeIn(connection.updated_at),
    };
    const kept = new Set(['id', 'owner_id', 'name', 'system', 'created_at']);
    const [stored] = await this.db
      .insert('module_repositories', row)
      .onConflict(['owner_id', 'name', 'system'])
      .merge(Object.keys(row).filter((column) => !kept.has(column)))
      .returning('*');
    return toRepository(stored);
  }

  async get(ownerId: string, name: string, system: string): Promise<ModuleRepository | null> {
    const row = await this.db.table('module_repositories').where({ owner_id: ownerId, name, system }).first();
    return row ? toRepository(row) : null;
  }

  async list(ownerId: string): Promise<ModuleRepository[]> {
    const rows = await this.db
      .table('module_repositories')
      .where({ owner_id: ownerId })
      .orderBy([{ column: 'name' }, { column: 'system' }]);
    return rows.map(toRepository);
  }

  async delete(ownerId: string, id: string): Promise<boolean> {
    return (await this.db.table('module_repositories').where({ owner_id: ownerId, id }).delete()) > 0;
  }

  async findForDelivery(id: string): Promise<ModuleRepository | null> {
    const row = await this.db.table('module_repositories').where({ id }).first();
    return row ? toRepository(row) : null;
  }

  async recordTag(ownerId: string, id: string, result: ModuleTagResult): Promise<void> {
    await this.db
      .table('module_repositories')
      .where({ owner_id: ownerId, id })
      .update({ last_tag: JSON.stringify(result) });
  }
}

function toRepository(row: Row): ModuleRepository {
  const provider = textOut(row.provider);
  const mode = textOut(row.webhook_mode);
  if (!isOneOf(GIT_PROVIDERS, provider)) throw new TypeError(`module_repositories.provider holds ${provider}`);
  if (!isOneOf(WEBHOOK_MODES, mode)) throw new TypeError(`module_repositories.webhook_mode holds ${mode}`);
  const lastTag = textOutOrNull(row.last_tag);
  return {
    id: uuidOut(row.id),
    owner_id: uuidOut(row.owner_id),
    name: textOut(row.name),
    system: textOut(row.system),
    provider,
    repository: textOut(row.repository),
    webhook_mode: mode,
    hook_id: textOutOrNull(row.hook_id),
    webhook_secret_sealed: textOut(row.webhook_secret_sealed),
    connected_by: uuidOut(row.connected_by),
    last_tag: lastTag === null ? null : (JSON.parse(lastTag) as ModuleTagResult),
    created_at: timeOut(row.created_at),
    updated_at: timeOut(row.updated_at),
  };
}
