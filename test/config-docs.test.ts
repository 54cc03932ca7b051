import { readFileSync } from 'node:fs';
import { withSettingsReference } from '@trellis/server';
import { describe, expect, it } from 'vitest';

/** docs/ must list what trellis-server reads: regenerate with `npm run build && npm run docs:config`. */
describe('generated configuration reference', () => {
  it('docs/configuration.md lists every setting of the table as it is', () => {
    const doc = readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8');
    expect(doc).toBe(withSettingsReference(doc));
  });
});
