/** A one-time sign-in link (`trellis-server users invite`): only its token's SHA-256 is kept. */
export interface SignInLink {
  token_hash: string;
  email: string;
  /** The name given with the invitation, for a person not yet known. */
  name: string | null;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

/** Sign-in links (system work only: they precede any owner). */
export interface SignInLinkStore {
  create(link: SignInLink): Promise<void>;
  /**
   * Spends the link of `tokenHash` at `at` when it is unused and not expired, in one step (two
   * requests with the same link cannot both succeed); the spent link, or null.
   */
  consume(tokenHash: string, at: string): Promise<SignInLink | null>;
  /** Deletes links that expired before `before`, used or not; how many. */
  deleteExpired(before: string): Promise<number>;
}
