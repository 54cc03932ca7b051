import {
  type ApiToken,
  type ApiTokenStore,
  ConflictError,
  type Page,
  type PageRequest,
  type User,
} from '@trellis/core';
import { copy, pageNewestFirst } from '../MemoryState.js';
import type { MemoryTransaction } from '../MemoryTransaction.js';

export class MemoryApiTokenStore implements ApiTokenStore {
  constructor(private readonly tx: MemoryTransaction) {}

  async create(token: ApiToken): Promise<ApiToken> {
    const { apiTokens } = this.tx.state;
    this.tx.checkWrite('api_tokens', token.owner_id);
    for (const existing of apiTokens.values()) {
      if (existing.id === token.id || existing.token_hash === token.token_hash) {
        throw new ConflictError('already_exists', 'a record with the same key already exists');
      }
    }
    apiTokens.set(token.id, copy(token));
    return copy(token);
  }

  async findByHash(tokenHash: string): Promise<ApiToken | null> {
    for (const token of this.tx.state.apiTokens.values()) {
      if (token.token_hash === tokenHash && this.tx.sees(token.owner_id)) return copy(token);
    }
    return null;
  }

  async findByHashWithCreator(tokenHash: string): Promise<{ token: ApiToken; creator: User | null } | null> {
    const token = await this.findByHash(tokenHash);
    if (!token) return null;
    const creator = this.tx.state.users.get(token.created_by);
    return { token, creator: creator && this.tx.sees(creator.id) ? copy(creator) : null };
  }

  async find(id: string): Promise<ApiToken | null> {
    const token = this.visible(id);
    return token ? copy(token) : null;
  }

  async page(ownerId: string, request: PageRequest): Promise<Page<ApiToken>> {
    if (!this.tx.sees(ownerId)) return { items: [], next: null };
    return pageNewestFirst(
      this.tx.state.apiTokens,
      (token) => token.owner_id === ownerId && token.revoked_at === null,
      (token) => token.created_at,
      request,
    );
  }

  async revoke(ownerId: string, id: string, at: string): Promise<boolean> {
    const token = this.visible(id);
    if (!token || token.owner_id !== ownerId || token.revoked_at !== null) return false;
    token.revoked_at = at;
    return true;
  }

  async recordUse(id: string, at: string, notBefore: string): Promise<boolean> {
    const token = this.visible(id);
    if (!token) return false;
    if (token.last_used_at !== null && Date.parse(token.last_used_at) >= Date.parse(notBefore)) return false;
    token.last_used_at = at;
    return true;
  }

  private visible(id: string): ApiToken | undefined {
    const token = this.tx.state.apiTokens.get(id);
    return token && this.tx.sees(token.owner_id) ? token : undefined;
  }
}
