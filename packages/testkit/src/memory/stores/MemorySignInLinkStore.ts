import type { SignInLink, SignInLinkStore } from '@trellis/core';
import { copy } from '../MemoryState.js';
import type { MemoryTransaction } from '../MemoryTransaction.js';

/** Sign-in links precede any owner: system work only, as on Postgres. */
export class MemorySignInLinkStore implements SignInLinkStore {
  constructor(private readonly tx: MemoryTransaction) {}

  private links(): Map<string, SignInLink> {
    if (this.tx.scope.kind !== 'system') {
      throw new Error('permission denied: sign-in links are read and written by system work only');
    }
    return this.tx.state.signInLinks;
  }

  async create(link: SignInLink): Promise<void> {
    this.links().set(link.token_hash, copy(link));
  }

  async consume(tokenHash: string, at: string): Promise<SignInLink | null> {
    const link = this.links().get(tokenHash);
    if (!link || link.used_at !== null || Date.parse(link.expires_at) <= Date.parse(at)) return null;
    link.used_at = at;
    return copy(link);
  }

  async deleteExpired(before: string): Promise<number> {
    const links = this.links();
    let deleted = 0;
    for (const [hash, link] of links) {
      if (Date.parse(link.expires_at) < Date.parse(before)) {
        links.delete(hash);
        deleted += 1;
      }
    }
    return deleted;
  }
}
