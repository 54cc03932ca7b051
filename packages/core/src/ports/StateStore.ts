import type { NewStateVersion, StateLock, StateVersion } from '../domain/records.js';

/** Versions and locks of the state each vine's engine keeps in the control plane. */
export interface StateStore {
  /** Records a version and gives it the next id. */
  addVersion(version: NewStateVersion): Promise<StateVersion>;
  /** The newest version of the vine's state that was not `rejected`, or null before the first write. */
  latest(ownerId: string, vineId: string): Promise<StateVersion | null>;
  /** Newest first, `rejected` ones included. */
  listVersions(ownerId: string, vineId: string): Promise<StateVersion[]>;
  /** One version of the owner's, by its id. */
  getVersion(ownerId: string, id: number): Promise<StateVersion | null>;
  /** The version recorded for a Terraform Cloud upload id, once its bytes arrived (issue 26). */
  findUpload(ownerId: string, uploadId: string): Promise<StateVersion | null>;
  /**
   * Deletes all but the newest `keep` versions of the vine's state and returns the storage keys of
   * those deleted, so their bytes can go too. A version written after its job was lost stays until a
   * person reviewed it (issue 30).
   */
  pruneVersions(ownerId: string, vineId: string, keep: number): Promise<string[]>;
  /** Marks the vine's unreviewed `after_lost` versions reviewed; answers how many it marked. */
  reviewAfterLost(ownerId: string, vineId: string, by: string, at: string): Promise<number>;
  getLock(ownerId: string, vineId: string): Promise<StateLock | null>;
  /** Takes the lock when it is free; otherwise returns the lock that holds it. */
  acquireLock(lock: StateLock): Promise<{ acquired: true } | { acquired: false; current: StateLock }>;
  /** Releases the lock if `lockId` holds it; false otherwise. */
  releaseLock(ownerId: string, vineId: string, lockId: string): Promise<boolean>;
}
