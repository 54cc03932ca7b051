import { readFileSync } from 'node:fs';
import { apiOpenApiDocument, renderApiMarkdown } from '@trellis/http';
import { describe, expect, it } from 'vitest';

/** docs/ must say what the server serves: regenerate with `npm run build && npm run docs:api`. */
describe('generated API reference', () => {
  it('docs/openapi.json and docs/api.md match the routes', () => {
    const doc = apiOpenApiDocument();
    const committed = JSON.parse(readFileSync(new URL('../docs/openapi.json', import.meta.url), 'utf8'));
    expect(committed).toEqual(JSON.parse(JSON.stringify(doc)));
    expect(readFileSync(new URL('../docs/api.md', import.meta.url), 'utf8')).toBe(renderApiMarkdown(doc));
  });
});
