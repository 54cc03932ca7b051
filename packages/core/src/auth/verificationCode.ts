import { timingSafeEqual } from 'node:crypto';
import type { Random } from '../ports/Random.js';

/** No vowels (no words), no look-alikes (no 0/O, 1/I/L confusion): DESIGN §4. */
export const VERIFICATION_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
export const VERIFICATION_CODE_LENGTH = 6;
export const VERIFICATION_CODE_TTL_SECONDS = 10 * 60;
export const MAX_VERIFICATION_ATTEMPTS = 5;

/** Uniform over the alphabet: bytes past the largest multiple of its size are rejected. */
export function generateVerificationCode(random: Random): string {
  const size = VERIFICATION_CODE_ALPHABET.length;
  const limit = 256 - (256 % size);
  let code = '';
  while (code.length < VERIFICATION_CODE_LENGTH) {
    for (const byte of random.bytes(VERIFICATION_CODE_LENGTH * 2)) {
      if (byte < limit && code.length < VERIFICATION_CODE_LENGTH) {
        code += VERIFICATION_CODE_ALPHABET[byte % size];
      }
    }
  }
  return code;
}

/**
 * A typed code as it is compared: upper case, without spaces or dashes (a person may type
 * `bcd fgh` or `BCD-FGH` for `BCDFGH`), neither of which is in the alphabet.
 */
export function normaliseVerificationCode(given: string): string {
  return given.replace(/[\s-]+/g, '').toUpperCase();
}

/** Case-insensitive, constant-time for codes of the right length; spaces and dashes ignored. */
export function verificationCodesMatch(expected: string, given: string): boolean {
  const a = Buffer.from(expected.toUpperCase(), 'utf8');
  const b = Buffer.from(normaliseVerificationCode(given), 'utf8');
  if (a.length !== b.length) return false;
  return timingSafeEqual(a, b);
}
