#!/usr/bin/env node
// Writes what is derived from the contract's operations: docs/openapi.json, docs/api.md and the
// client's table of operation routes. Run after `npm run build`: `npm run docs:api`.
// test/api-docs.test.ts fails when a committed file is stale.
import { writeFileSync } from 'node:fs';
import { renderClientRoutes } from '@trellis/contract';
import { apiOpenApiDocument, renderApiMarkdown } from '@trellis/http';

const doc = apiOpenApiDocument();
writeFileSync(new URL('../docs/openapi.json', import.meta.url), `${JSON.stringify(doc, null, 2)}\n`);
writeFileSync(new URL('../docs/api.md', import.meta.url), renderApiMarkdown(doc));
writeFileSync(new URL('../packages/client/src/operationRoutes.ts', import.meta.url), renderClientRoutes());
console.log('wrote docs/openapi.json, docs/api.md and packages/client/src/operationRoutes.ts');
