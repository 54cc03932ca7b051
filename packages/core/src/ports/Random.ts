/** Randomness comes through this port; the production adapter is `node:crypto`. */
export interface Random {
  /** `n` cryptographically strong random bytes. */
  bytes(n: number): Uint8Array;
  /** A random (v4) UUID. */
  uuid(): string;
}
