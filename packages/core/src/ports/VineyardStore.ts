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
  /** `ConflictError('vineyard_name_taken')` as `create`; `NotFoundError` when there is none. */
  rename(ownerId: string, id: string, name: string): Promise<Vineyard>;
  /**
   * Deletes an empty vineyard (the caller checks it holds no vines): gone from every read, its
   * name free; jobs and deleted vines that name it keep their history.
   */
  markDeleted(ownerId: string, id: string, at: string): Promise<void>;
}
