import {
  generateVerificationCode,
  MAX_VERIFICATION_ATTEMPTS,
  VERIFICATION_CODE_ALPHABET,
  VERIFICATION_CODE_LENGTH,
  VERIFICATION_CODE_TTL_SECONDS,
  verificationCodesMatch,
} from '@trellis/core';
import { FakeRandom, SequenceRandom } from '@trellis/testkit/memory';
import { describe, expect, it } from 'vitest';

describe('verification codes', () => {
  it('are 6 characters from BCDFGHJKLMNPQRSTVWXZ, valid 10 minutes, 5 attempts', () => {
    expect(VERIFICATION_CODE_ALPHABET).toBe('BCDFGHJKLMNPQRSTVWXZ');
    expect(VERIFICATION_CODE_LENGTH).toBe(6);
    expect(VERIFICATION_CODE_TTL_SECONDS).toBe(600);
    expect(MAX_VERIFICATION_ATTEMPTS).toBe(5);
    const random = new FakeRandom('codes');
    for (let i = 0; i < 500; i++) {
      expect(generateVerificationCode(random)).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{6}$/);
    }
  });

  it('come from the Random port, byte by byte', () => {
    const random = new SequenceRandom([0, 1, 2, 3, 4, 19]);
    expect(generateVerificationCode(random)).toBe('BCDFGZ');
    expect(random.calls.bytes).toBeGreaterThan(0);
    expect(generateVerificationCode(new SequenceRandom([20, 21, 39, 40, 59, 239]))).toBe('BCZBZZ');
  });

  it('reject bytes at or above 240 so every letter is equally likely', () => {
    // 240 = 12 * 20: bytes 240..255 would favour the first 16 letters.
    const random = new SequenceRandom([240, 255, 0, 19, 250, 20, 39, 5, 6]);
    expect(generateVerificationCode(random)).toBe('BZBZHJ');
  });

  it('keep drawing when a whole draw is rejected', () => {
    const random = new SequenceRandom([...new Array(12).fill(255), 7, 8, 9, 10, 11, 12]);
    expect(generateVerificationCode(random)).toBe('KLMNPQ');
    expect(random.calls.bytes).toBe(2);
  });

  it('are roughly uniform over the alphabet (chi-square over 120,000 letters)', () => {
    const random = new FakeRandom('uniformity');
    const counts = new Map<string, number>([...VERIFICATION_CODE_ALPHABET].map((letter) => [letter, 0]));
    const draws = 20_000;
    for (let i = 0; i < draws; i++) {
      for (const letter of generateVerificationCode(random)) counts.set(letter, (counts.get(letter) ?? 0) + 1);
    }
    const expected = (draws * VERIFICATION_CODE_LENGTH) / VERIFICATION_CODE_ALPHABET.length;
    let chiSquare = 0;
    for (const count of counts.values()) chiSquare += (count - expected) ** 2 / expected;
    // 19 degrees of freedom: mean 19; 60 is past p = 1e-6, yet a plain `byte % 20` scores ~117 here.
    expect(counts.size).toBe(20);
    expect(chiSquare).toBeLessThan(60);
  });

  it('differ between draws', () => {
    const random = new FakeRandom('distinct');
    const codes = new Set(Array.from({ length: 1000 }, () => generateVerificationCode(random)));
    expect(codes.size).toBeGreaterThan(990);
  });

  describe('matching', () => {
    it('accepts the same code', () => expect(verificationCodesMatch('BCDFGH', 'BCDFGH')).toBe(true));
    it('ignores case', () => {
      expect(verificationCodesMatch('BCDFGH', 'bcdfgh')).toBe(true);
      expect(verificationCodesMatch('BCDFGH', 'bCdFgH')).toBe(true);
    });
    it('ignores surrounding whitespace', () => {
      expect(verificationCodesMatch('BCDFGH', '  BCDFGH\n')).toBe(true);
      expect(verificationCodesMatch('BCDFGH', '\tbcdfgh ')).toBe(true);
    });
    it('refuses another code', () => {
      expect(verificationCodesMatch('BCDFGH', 'BCDFGJ')).toBe(false);
      expect(verificationCodesMatch('BCDFGH', 'HGFDCB')).toBe(false);
    });
    it('refuses a code of another length', () => {
      expect(verificationCodesMatch('BCDFGH', 'BCDFG')).toBe(false);
      expect(verificationCodesMatch('BCDFGH', 'BCDFGHJ')).toBe(false);
      expect(verificationCodesMatch('BCDFGH', '')).toBe(false);
    });
    it('ignores spaces and dashes inside the code, as a person may type them', () => {
      expect(verificationCodesMatch('BCDFGH', 'BCD FGH')).toBe(true);
      expect(verificationCodesMatch('BCDFGH', 'bcd-fgh')).toBe(true);
      expect(verificationCodesMatch('BCDFGH', 'B C D\tF G H')).toBe(true);
      expect(verificationCodesMatch('BCDFGH', 'BCD FGJ')).toBe(false);
      expect(verificationCodesMatch('BCDFGH', 'BCD.FGH')).toBe(false);
    });
  });
});
