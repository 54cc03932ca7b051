/**
 * An authorization code of `tofu login` (issue 26): made when a signed-in person approves the
 * consent page, redeemed once by the CLI's token request. Only its SHA-256 is kept.
 */
export interface TfeLoginCode {
  code_hash: string;
  user_id: string;
  client_id: string;
  redirect_uri: string;
  /** The PKCE S256 challenge the CLI sent with its authorization request. */
  code_challenge: string;
  created_at: string;
  expires_at: string;
  consumed_at: string | null;
}

/** System records: the token request precedes any owner. */
export interface TfeLoginCodeStore {
  save(code: TfeLoginCode): Promise<void>;
  /**
   * Marks the code consumed at `at` unless it already was, in one statement, so of two
   * concurrent redemptions one wins. Answers the code as it was before (null: unknown).
   */
  consume(codeHash: string, at: string): Promise<TfeLoginCode | null>;
  /** Deletes codes that expired before `before`; answers how many. */
  deleteExpired(before: string): Promise<number>;
}
