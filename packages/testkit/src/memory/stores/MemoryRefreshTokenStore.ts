import { ConflictError, type RefreshTokenRecord, type RefreshTokenStore } from '@trellis/core';
import { copy } from '../MemoryState.js';
import type { MemoryTransaction } from '../MemoryTransaction.js';

export class MemoryRefreshTokenStore implements RefreshTokenStore {
  constructor(private readonly tx: MemoryTransaction) {}

  async create(record: RefreshTokenRecord): Promise<RefreshTokenRecord> {
    const { refreshTokens } = this.tx.state;
    this.tx.checkWrite('refresh_tokens', record.user_id);
    if (refreshTokens.has(record.id)) throw new ConflictError('refresh_token_exists', 'this token id is taken');
    refreshTokens.set(record.id, copy(record));
    return copy(record);
  }

  async get(id: string): Promise<RefreshTokenRecord | null> {
    const record = this.visible(id);
    return record ? copy(record) : null;
  }

  async markRotated(id: string, at: string): Promise<boolean> {
    const record = this.visible(id);
    if (!record || record.rotated_at !== null) return false;
    record.rotated_at = at;
    return true;
  }

  async revokeFamily(familyId: string, at: string): Promise<void> {
    for (const record of this.tx.state.refreshTokens.values()) {
      if (record.family_id === familyId && record.revoked_at === null && this.tx.sees(record.user_id)) {
        record.revoked_at = at;
      }
    }
  }

  private visible(id: string): RefreshTokenRecord | undefined {
    const record = this.tx.state.refreshTokens.get(id);
    return record && this.tx.sees(record.user_id) ? record : undefined;
  }
}
