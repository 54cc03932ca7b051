import { type CloudIdentity, type CloudIdentityStore, ConflictError } from '@trellis/core';
import { copy } from '../MemoryState.js';
import type { MemoryTransaction } from '../MemoryTransaction.js';

export class MemoryCloudIdentityStore implements CloudIdentityStore {
  constructor(private readonly tx: MemoryTransaction) {}

  async create(identity: CloudIdentity): Promise<CloudIdentity> {
    const { cloudIdentities } = this.tx.state;
    this.tx.checkWrite('cloud_identities', identity.owner_id);
    if (cloudIdentities.has(identity.id)) {
      throw new ConflictError('cloud_identity_exists', 'a cloud identity with this id exists');
    }
    cloudIdentities.set(identity.id, copy(identity));
    return copy(identity);
  }

  async get(ownerId: string, id: string): Promise<CloudIdentity | null> {
    const identity = this.tx.state.cloudIdentities.get(id);
    return identity && identity.owner_id === ownerId && this.tx.sees(ownerId) ? copy(identity) : null;
  }
}
