import type { SigningKey } from '../domain/records.js';

/**
 * The OIDC issuer's signing keys (issue 16): system records, used only in system units of work
 * (on Postgres the application role has no grant on the table: private keys stay out of owner work).
 */
export interface SigningKeyStore {
  /**
   * At most one key signs: creating a key that is not retired while another one signs is refused
   * (`ConflictError('signing_key_conflict')`), so replicas racing to make the first key, or to
   * rotate, end up with one. Retire the others first (`retireOthers`).
   */
  create(key: SigningKey): Promise<SigningKey>;
  /** The key that signs: the newest not retired (null: none yet). */
  current(): Promise<SigningKey | null>;
  /** Keys served in the JWKS at `now`: not retired, or retired and published until after `now`; newest first. */
  listPublished(now: string): Promise<SigningKey[]>;
  /** Retires every key that signs except `keepId` (which may not exist yet), published until `publishedUntil`; how many. */
  retireOthers(keepId: string, at: string, publishedUntil: string): Promise<number>;
  /** Deletes retired keys no longer published at `now`; how many. */
  deleteExpired(now: string): Promise<number>;
}
