import {
  FORK_PULL_REQUEST_MODES,
  type GitProvider,
  isOneOf,
  GIT_PROVIDERS,
  type VcsConnection,
  type VcsConnectionStore,
  WEBHOOK_MODES,
} from '@trellis/core';
import type { SqlSession } from '../dialects/Dialect.js';
import { jsonIn, jsonOut, type Row, textOut, textOutOrNull, timeIn, timeOut, uuidOut } from '../rows.js';

export class SqlVcsConnectionStore implements VcsConnectionStore {
  constructor(private readonly db: SqlSession) {}

  async put(connection: VcsConnection): Promise<VcsConnection> {
    const row = {
      vine_id: connection.vine_id,
      owner_id: connection.owner_id,
      provider: connection.provider,
      repository: connection.repository,
      repository_key: connection.repository.toLowerCase(),
      branch: connection.branch,
      paths: jsonIn(connection.paths),
      auto_deploy: connection.auto_deploy,
      pull_requests: connection.pull_requests,
      fork_pull_requests: connection.fork_pull_requests,
      webhook_mode: connection.webhook_mode,
      hook_id: connection.hook_id,
      webhook_secret_sealed: connection.webhook_secret_sealed,
      connected_by: connection.connected_by,
      created_at: timeIn(connection.created_at),
      updated_at: timeIn(connection.updated_at),
    };
    const [stored] = await this.db
      .insert('vcs_connections', row)
      .onConflict('vine_id')
      .merge(Object.keys(row).filter((column) => column !== 'vine_id' && column !== 'created_at'))
      .returning('*');
    return toConnection(stored);
  }

  async get(ownerId: string, vineId: string): Promise<VcsConnection | null> {
    const row = await this.db.table('vcs_connections').where({ owner_id: ownerId, vine_id: vineId }).first();
    return row ? toConnection(row) : null;
  }

  async delete(ownerId: string, vineId: string): Promise<boolean> {
    const deleted = await this.db.table('vcs_connections').where({ owner_id: ownerId, vine_id: vineId }).delete();
    return deleted > 0;
  }

  async findForDelivery(vineId: string): Promise<VcsConnection | null> {
    const row = await this.db.table('vcs_connections').where({ vine_id: vineId }).first();
    return row ? toConnection(row) : null;
  }

  async countManual(ownerId: string): Promise<number> {
    const [row] = await this.db
      .table('vcs_connections')
      .where({ owner_id: ownerId, webhook_mode: 'manual' })
      .count({ count: '*' });
    return Number(row?.count ?? 0);
  }

  async recordDelivery(provider: GitProvider, deliveryId: string, at: string): Promise<boolean> {
    const inserted = await this.db
      .insert('vcs_deliveries', { provider, delivery_id: deliveryId, received_at: timeIn(at) })
      .onConflict(['provider', 'delivery_id'])
      .ignore()
      .returning('delivery_id');
    return inserted.length > 0;
  }
}

function toConnection(row: Row): VcsConnection {
  const provider = textOut(row.provider);
  const mode = textOut(row.webhook_mode);
  const forks = textOut(row.fork_pull_requests);
  if (!isOneOf(GIT_PROVIDERS, provider)) throw new TypeError(`vcs_connections.provider holds ${provider}`);
  if (!isOneOf(WEBHOOK_MODES, mode)) throw new TypeError(`vcs_connections.webhook_mode holds ${mode}`);
  if (!isOneOf(FORK_PULL_REQUEST_MODES, forks))
    throw new TypeError(`vcs_connections.fork_pull_requests holds ${forks}`);
  return {
    vine_id: uuidOut(row.vine_id),
    owner_id: uuidOut(row.owner_id),
    provider,
    repository: textOut(row.repository),
    branch: textOut(row.branch),
    paths: jsonOut<string[]>(row.paths),
    auto_deploy: Boolean(row.auto_deploy),
    pull_requests: Boolean(row.pull_requests),
    fork_pull_requests: forks,
    webhook_mode: mode,
    hook_id: textOutOrNull(row.hook_id),
    webhook_secret_sealed: textOut(row.webhook_secret_sealed),
    connected_by: uuidOut(row.connected_by),
    created_at: timeOut(row.created_at),
    updated_at: timeOut(row.updated_at),
  };
}
