import { createHash, timingSafeEqual } from 'node:crypto';
import type { Random } from '../ports/Random.js';

/** 256 random bits: SPEC §5.4 asks for a random token, DESIGN for at least this much. */
export const WORKER_TOKEN_BYTES = 32;
const PREFIX = 'trw_';

/** A new worker token, `trw_` + 43 base64url characters. Shown once, never stored. */
export function generateWorkerToken(random: Random): string {
  return PREFIX + Buffer.from(random.bytes(WORKER_TOKEN_BYTES)).toString('base64url');
}

/** Lowercase hex SHA-256: what `workers.token_hash` holds. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Hashes `presented` and compares it with the stored hash in constant time. */
export function tokenMatchesHash(presented: string, storedHash: string): boolean {
  const given = Buffer.from(hashToken(presented), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return stored.length === given.length && timingSafeEqual(given, stored);
}
