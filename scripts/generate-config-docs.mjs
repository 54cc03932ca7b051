#!/usr/bin/env node
// Writes the variables' table of docs/configuration.md from trellis-server's settings table
// (packages/server/src/settings). Run after `npm run build`: `npm run docs:config`. A test fails
// when the committed document is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { withSettingsReference } from '@trellis/server';

const file = new URL('../docs/configuration.md', import.meta.url);
writeFileSync(file, withSettingsReference(readFileSync(file, 'utf8')));
console.log('wrote the settings table of docs/configuration.md');
