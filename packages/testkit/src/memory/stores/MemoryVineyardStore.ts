import {
  ConflictError,
  NotFoundError,
  type Page,
  type PageRequest,
  type Vineyard,
  type VineyardStore,
} from '@trellis/core';
import { copy, oldestFirst, pageNewestFirst } from '../MemoryState.js';
import { ownerList, type OwnerIds } from '@trellis/core';
import type { MemoryTransaction } from '../MemoryTransaction.js';

export class MemoryVineyardStore implements VineyardStore {
  constructor(private readonly tx: MemoryTransaction) {}

  async create(vineyard: Vineyard): Promise<Vineyard> {
    const { vineyards } = this.tx.state;
    this.tx.checkWrite('vineyards', vineyard.owner_id);
    for (const existing of vineyards.values()) {
      if (existing.owner_id === vineyard.owner_id && existing.name === vineyard.name) {
        throw new ConflictError('vineyard_name_taken', `a vineyard named ${vineyard.name} already exists`);
      }
    }
    if (vineyards.has(vineyard.id) || this.tx.state.deletedVineyards.has(vineyard.id))
      throw new ConflictError('vineyard_exists', 'a vineyard with this id exists');
    vineyards.set(vineyard.id, copy(vineyard));
    return copy(vineyard);
  }

  async get(ownerId: string, id: string): Promise<Vineyard | null> {
    const vineyard = this.tx.state.vineyards.get(id);
    return vineyard && vineyard.owner_id === ownerId && this.tx.sees(ownerId) ? copy(vineyard) : null;
  }

  async list(ownerId: string): Promise<Vineyard[]> {
    if (!this.tx.sees(ownerId)) return [];
    const mine = [...this.tx.state.vineyards.values()].filter((vineyard) => vineyard.owner_id === ownerId);
    return oldestFirst(mine, (vineyard) => vineyard.created_at).map(copy);
  }

  async page(owners: OwnerIds, request: PageRequest): Promise<Page<Vineyard>> {
    const visible = ownerList(owners).filter((owner) => this.tx.sees(owner));
    return pageNewestFirst(
      this.tx.state.vineyards,
      (vineyard) => visible.includes(vineyard.owner_id),
      (vineyard) => vineyard.created_at,
      request,
    );
  }

  async rename(ownerId: string, id: string, name: string): Promise<Vineyard> {
    const vineyard = this.tx.state.vineyards.get(id);
    if (!vineyard || vineyard.owner_id !== ownerId || !this.tx.sees(ownerId)) throw new NotFoundError('vineyard');
    this.tx.checkWrite('vineyards', ownerId);
    for (const existing of this.tx.state.vineyards.values()) {
      if (existing.owner_id === ownerId && existing.id !== id && existing.name === name) {
        throw new ConflictError('vineyard_name_taken', `a vineyard named ${name} already exists`);
      }
    }
    vineyard.name = name;
    return copy(vineyard);
  }

  async markDeleted(ownerId: string, id: string, _at: string): Promise<void> {
    const vineyard = this.tx.state.vineyards.get(id);
    if (!vineyard || vineyard.owner_id !== ownerId || !this.tx.sees(ownerId)) throw new NotFoundError('vineyard');
    this.tx.checkWrite('vineyards', ownerId);
    this.tx.state.vineyards.delete(id);
    this.tx.state.deletedVineyards.set(id, vineyard);
  }
}
