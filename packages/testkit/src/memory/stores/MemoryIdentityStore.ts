import type { Identity, IdentityProvider, IdentityStore } from '@trellis/core';
import { copy } from '../MemoryState.js';
import type { MemoryTransaction } from '../MemoryTransaction.js';

function keyOf(provider: IdentityProvider, providerUserId: string): string {
  return `${provider}:${providerUserId}`;
}

export class MemoryIdentityStore implements IdentityStore {
  constructor(private readonly tx: MemoryTransaction) {}

  /** A known link keeps its user and takes the new token and scopes. */
  async upsert(identity: Identity): Promise<Identity> {
    const { identities } = this.tx.state;
    const key = keyOf(identity.provider, identity.provider_user_id);
    const existing = identities.get(key);
    const next: Identity = existing
      ? { ...existing, provider_token: identity.provider_token, scopes: identity.scopes }
      : copy(identity);
    this.tx.checkWrite('identities', next.user_id);
    identities.set(key, next);
    return copy(next);
  }

  async find(provider: IdentityProvider, providerUserId: string): Promise<Identity | null> {
    const identity = this.tx.state.identities.get(keyOf(provider, providerUserId));
    return identity && this.tx.sees(identity.user_id) ? copy(identity) : null;
  }

  async listForUser(userId: string): Promise<Identity[]> {
    return [...this.tx.state.identities.values()]
      .filter((identity) => identity.user_id === userId && this.tx.sees(identity.user_id))
      .map(copy);
  }
}
