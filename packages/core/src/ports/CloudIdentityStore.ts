import type { CloudIdentity } from '../domain/records.js';

export interface CloudIdentityStore {
  create(identity: CloudIdentity): Promise<CloudIdentity>;
  get(ownerId: string, id: string): Promise<CloudIdentity | null>;
}
