import type { TfeLoginCode, TfeLoginCodeStore } from '@trellis/core';
import { copy } from '../MemoryState.js';
import type { MemoryTransaction } from '../MemoryTransaction.js';

/** `tofu login` codes belong to nobody and only system work may touch them (as on Postgres). */
export class MemoryTfeLoginCodeStore implements TfeLoginCodeStore {
  constructor(private readonly tx: MemoryTransaction) {}

  private codes(): Map<string, TfeLoginCode> {
    if (this.tx.scope.kind !== 'system') {
      throw new Error('permission denied: login codes are read and written by system work only');
    }
    return this.tx.state.tfeLoginCodes;
  }

  async save(code: TfeLoginCode): Promise<void> {
    this.codes().set(code.code_hash, copy(code));
  }

  async consume(codeHash: string, at: string): Promise<TfeLoginCode | null> {
    const code = this.codes().get(codeHash);
    if (!code) return null;
    const before = copy(code);
    if (code.consumed_at === null) code.consumed_at = at;
    return before;
  }

  async deleteExpired(before: string): Promise<number> {
    let deleted = 0;
    for (const [hash, code] of this.codes()) {
      if (Date.parse(code.expires_at) < Date.parse(before)) {
        this.codes().delete(hash);
        deleted += 1;
      }
    }
    return deleted;
  }
}
