import type { RefreshTokenRecord } from '../domain/records.js';

export interface RefreshTokenStore {
  create(record: RefreshTokenRecord): Promise<RefreshTokenRecord>;
  get(id: string): Promise<RefreshTokenRecord | null>;
  /** Marks the token rotated; false when it already was (a reuse). */
  markRotated(id: string, at: string): Promise<boolean>;
  /** Revokes every token of the family that is not revoked yet. */
  revokeFamily(familyId: string, at: string): Promise<void>;
}
