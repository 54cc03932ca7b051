/**
 * Encrypts secrets kept at rest (provider tokens, DESIGN §2). `context` is bound to the sealed
 * value (authenticated, not stored): a value sealed for one record does not open for another.
 */
export interface SecretBox {
  /** An opaque, versioned text safe to store in a column. */
  seal(plaintext: string, context: string): Promise<string>;
  /**
   * The plaintext. Throws `UnauthorizedError('secret_unreadable')` when the value was tampered
   * with, sealed for another context, or sealed with a key this box no longer has.
   */
  open(sealed: string, context: string): Promise<string>;
}
