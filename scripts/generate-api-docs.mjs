#!/usr/bin/env node
// Writes docs/openapi.json and docs/api.md from the same route schemas that validate requests.
// Run after `npm run build`: `npm run docs:api`. A test fails when the committed files are stale.
import { writeFileSync } from 'node:fs';
import { apiOpenApiDocument, renderApiMarkdown } from '@trellis/http';

const doc = apiOpenApiDocument();
writeFileSync(new URL('../docs/openapi.json', import.meta.url), `${JSON.stringify(doc, null, 2)}\n`);
writeFileSync(new URL('../docs/api.md', import.meta.url), renderApiMarkdown(doc));
console.log('wrote docs/openapi.json and docs/api.md');
