import { ownerList, type OwnerIds } from '@trellis/core';
import type { Page, PageRequest, Vineyard, VineyardStore } from '@trellis/core';
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
    const row = await this.db.table('vineyards').where({ owner_id: ownerId, id }).first();
    return row ? toVineyard(row) : null;
  }

  async list(ownerId: string): Promise<Vineyard[]> {
    const rows: Row[] = await this.db
      .table('vineyards')
      .where({ owner_id: ownerId })
      .orderBy([{ column: 'created_at' }, { column: 'seq' }]);
    return rows.map(toVineyard);
  }

  async page(owners: OwnerIds, request: PageRequest): Promise<Page<Vineyard>> {
    return keysetPage(
      this.db.table('vineyards').whereIn('owner_id', ownerList(owners)),
      'created_at',
      request,
      toVineyard,
    );
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
