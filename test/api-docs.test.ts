import { readFileSync } from 'node:fs';
import { renderClientRoutes } from '@trellis/contract';
import { apiOpenApiDocument, renderApiMarkdown } from '@trellis/http';
import { describe, expect, it } from 'vitest';

/** What is derived from the contract must say what it holds: regenerate with `npm run build && npm run docs:api`. */
describe('generated from the contract', () => {
  it('docs/openapi.json and docs/api.md match the operations', () => {
    const doc = apiOpenApiDocument();
    const committed = JSON.parse(readFileSync(new URL('../docs/openapi.json', import.meta.url), 'utf8'));
    expect(committed).toEqual(JSON.parse(JSON.stringify(doc)));
    expect(readFileSync(new URL('../docs/api.md', import.meta.url), 'utf8')).toBe(renderApiMarkdown(doc));
  });

  it("the client's table of operation routes matches the operations", () => {
    const committed = readFileSync(new URL('../packages/client/src/operationRoutes.ts', import.meta.url), 'utf8');
    expect(committed).toBe(renderClientRoutes());
  });
});
