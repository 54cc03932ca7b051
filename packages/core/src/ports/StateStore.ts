import type { StateLock, StateVersion } from '../domain/records.js';

/** Versions and locks of the state each vine's engine keeps in the control plane. */
export interface StateStore {
  /** Records a version and gives it the next id. */
  addVersion(version: Omit<StateVersion, 'id'>): Promise<StateVersion>;
  /** The newest version of the vine's state, or null before the first write. */
  latest(ownerId: string, vineId: string): Promise<StateVersion | null>;
  /** Newest first. */
  listVersions(ownerId: string, vineId: string): Promise<StateVersion[]>;
  /** One version of the owner's, by its id. */
  getVersion(ownerId: string, id: number): Promise<StateVersion | null>;
  /** The version recorded for a Terraform Cloud upload id, once its bytes arrived (issue 26). */
  findUpload(ownerId: string, uploadId: string): Promise<StateVersion | null>;
  /**
   * Deletes all but the newest `keep` versions of the vine's state and returns the storage keys of
   * those deleted, so their bytes can go too.
   */
  pruneVersions(ownerId: string, vineId: string, keep: number): Promise<string[]>;
  getLock(ownerId: string, vineId: string): Promise<StateLock | null>;
  /** Takes the lock when it is free; otherwise returns the lock that holds it. */
  acquireLock(lock: StateLock): Promise<{ acquired: true } | { acquired: false; current: StateLock }>;
  /** Releases the lock if `lockId` holds it; false otherwise. */
  releaseLock(ownerId: string, vineId: string, lockId: string): Promise<boolean>;
}
