import type { OwnerIds } from './UnitOfWork.js';
import type { Page, PageRequest } from '../domain/pagination.js';
import type { Vineyard } from '../domain/records.js';

export interface VineyardStore {
  /** `ConflictError('vineyard_name_taken')` when the owner already has one of that name. */
  create(vineyard: Vineyard): Promise<Vineyard>;
  get(ownerId: string, id: string): Promise<Vineyard | null>;
  /** Oldest first. */
  list(ownerId: string): Promise<Vineyard[]>;
  /** One page, newest first (by `created_at`, then insertion). */
  page(owners: OwnerIds, request: PageRequest): Promise<Page<Vineyard>>;
}
