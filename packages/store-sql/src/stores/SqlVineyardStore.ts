import { ownerList, type OwnerIds } from '@trellis/core';
import { NotFoundError, type Page, type PageRequest, type Vineyard, type VineyardStore } from '@trellis/core';
import type { SqlSession } from '../dialects/Dialect.js';
import { type Row, textOut, timeIn, timeOut, uuidOut } from '../rows.js';
import { keysetPage } from './keysetPage.js';

export class SqlVineyardStore implements VineyardStore {
  constructor(private readonly db: SqlSession) {}

  async create(vineyard: Vineyard): Promise<Vineyard> {
    const [row] = await this.db.recoverable((db) =>
      db
        .insert('vineyards', {
          id: vineyard.id,
          owner_id: vineyard.owner_id,
          name: vineyard.name,
          created_at: timeIn(vineyard.created_at),
        })
        .returning('*'),
    );
    return toVineyard(row);
  }

  async get(ownerId: string, id: string): Promise<Vineyard | null> {
    const row = await this.live().where({ owner_id: ownerId, id }).first();
    return row ? toVineyard(row) : null;
  }

  async list(ownerId: string): Promise<Vineyard[]> {
    const rows: Row[] = await this.live()
      .where({ owner_id: ownerId })
      .orderBy([{ column: 'created_at' }, { column: 'seq' }]);
    return rows.map(toVineyard);
  }

  async page(owners: OwnerIds, request: PageRequest): Promise<Page<Vineyard>> {
    return keysetPage(this.live().whereIn('owner_id', ownerList(owners)), 'created_at', request, toVineyard);
  }

  async rename(ownerId: string, id: string, name: string): Promise<Vineyard> {
    const [row] = await this.db.recoverable((db) =>
      db.table('vineyards').where({ owner_id: ownerId, id }).whereNull('deleted_at').update({ name }).returning('*'),
    );
    if (!row) throw new NotFoundError('vineyard');
    return toVineyard(row);
  }

  async markDeleted(ownerId: string, id: string, at: string): Promise<void> {
    const updated = await this.live()
      .where({ owner_id: ownerId, id })
      .update({ deleted_at: timeIn(at) });
    if (updated === 0) throw new NotFoundError('vineyard');
  }

  /** Vineyards not deleted (issue 25): a deleted one's row stays for the jobs that name it. */
  private live() {
    return this.db.table('vineyards').whereNull('deleted_at');
  }
}

export function toVineyard(row: Row): Vineyard {
  return {
    id: uuidOut(row.id),
    owner_id: uuidOut(row.owner_id),
    name: textOut(row.name),
    created_at: timeOut(row.created_at),
  };
}
