import type { SigningKey, SigningKeyStore } from '@trellis/core';
import { ConflictError } from '@trellis/core';
import { copy, newestFirst } from '../MemoryState.js';
import type { MemoryTransaction } from '../MemoryTransaction.js';

/** Signing keys belong to nobody and only system work may touch them (Postgres grants the app role nothing). */
export class MemorySigningKeyStore implements SigningKeyStore {
  constructor(private readonly tx: MemoryTransaction) {}

  private keys(): Map<string, SigningKey> {
    if (this.tx.scope.kind !== 'system') {
      throw new Error('permission denied: signing keys are read and written by system work only');
    }
    return this.tx.state.signingKeys;
  }

  async create(key: SigningKey): Promise<SigningKey> {
    const keys = this.keys();
    if (keys.has(key.id)) throw new ConflictError('signing_key_exists', 'a signing key with this id exists');
    if (key.retired_at === null && [...keys.values()].some((other) => other.retired_at === null)) {
      throw new ConflictError('signing_key_conflict', 'another signing key was made at the same time');
    }
    keys.set(key.id, copy(key));
    return copy(key);
  }

  async current(): Promise<SigningKey | null> {
    const signing = newestFirst(
      [...this.keys().values()].filter((key) => key.retired_at === null),
      (key) => key.created_at,
    );
    return signing[0] ? copy(signing[0]) : null;
  }

  async listPublished(now: string): Promise<SigningKey[]> {
    const at = Date.parse(now);
    return newestFirst(
      [...this.keys().values()].filter(
        (key) => key.retired_at === null || (key.published_until !== null && Date.parse(key.published_until) > at),
      ),
      (key) => key.created_at,
    ).map(copy);
  }

  async retireOthers(keepId: string, at: string, publishedUntil: string): Promise<number> {
    let retired = 0;
    for (const key of this.keys().values()) {
      if (key.id === keepId || key.retired_at !== null) continue;
      key.retired_at = at;
      key.published_until = publishedUntil;
      retired += 1;
    }
    return retired;
  }

  async deleteExpired(now: string): Promise<number> {
    const at = Date.parse(now);
    let deleted = 0;
    const keys = this.keys();
    for (const [id, key] of keys) {
      if (key.retired_at !== null && key.published_until !== null && Date.parse(key.published_until) <= at) {
        keys.delete(id);
        deleted += 1;
      }
    }
    return deleted;
  }
}
