#!/usr/bin/env node
import { runAgentCli } from '../cli/main.js';

const code = await runAgentCli(process.argv.slice(2));
process.exit(code);
