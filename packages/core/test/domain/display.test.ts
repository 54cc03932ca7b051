import { describe, expect, it } from 'vitest';
import { DISPLAY_VALUE_CHARS, shortenForDisplay } from '../../src/domain/display.js';

describe('values as people read them', () => {
  it('keeps a short value, and cuts a long one saying how much is left out', () => {
    expect(shortenForDisplay('eu-west-1')).toBe('eu-west-1');
    expect(shortenForDisplay('x'.repeat(DISPLAY_VALUE_CHARS))).toBe('x'.repeat(DISPLAY_VALUE_CHARS));
    expect(shortenForDisplay('y'.repeat(2000))).toBe(`${'y'.repeat(DISPLAY_VALUE_CHARS)}… (+1,920 characters)`);
  });

  it('shows the first line of a multi-line value', () => {
    expect(shortenForDisplay('line one\nline two')).toBe('line one… (+9 characters)');
  });
});
