import { isSafeNextPath, safeNextOr, safeNextPath, ValidationError } from '@trellis/core';
import { describe, expect, it } from 'vitest';

const SAFE = ['/', '/cli/login?device_code=1', '/jobs/42#logs', '/a/b?x=%2F%2Fevil'];

const UNSAFE: unknown[] = [
  '//evil.example',
  '/\\evil.example',
  '/a\\b',
  'https://evil.example',
  'javascript:alert(1)',
  'evil',
  // Browsers drop tab and newline from URLs: `/\t/evil` would become `//evil`.
  '/\t/evil.example',
  '/\n/evil.example',
  '/\r/evil.example',
  '/a\u0000b',
  '/a\u001fb',
  '/a\u007fb',
  `/${'a'.repeat(2048)}`,
  42,
  null,
  undefined,
  ['/x'],
];

describe('the safe-next rule', () => {
  it.each(SAFE)('accepts %j', (value) => {
    expect(isSafeNextPath(value)).toBe(true);
    expect(safeNextOr(value)).toBe(value);
    expect(safeNextPath(value)).toBe(value);
  });

  it.each(UNSAFE)('refuses %j', (value) => {
    expect(isSafeNextPath(value)).toBe(false);
    expect(safeNextOr(value, '/home')).toBe('/home');
  });

  it('sign-in refuses an unsafe next with 400 invalid_next, and defaults a missing one to /', () => {
    for (const value of UNSAFE.filter((v) => v !== undefined && v !== null)) {
      expect(() => safeNextPath(value)).toThrow(ValidationError);
      expect(() => safeNextPath(value)).toThrow(expect.objectContaining({ code: 'invalid_next' }));
    }
    expect(safeNextPath(undefined)).toBe('/');
    expect(safeNextPath('')).toBe('/');
  });
});
