#!/usr/bin/env node
// A committed shim: npm links workspace bins at install time, before `npm run build` creates
// dist/, so the bin npm links is this file and the built program is imported from it.
await import('../dist/bin/trellis.js');
