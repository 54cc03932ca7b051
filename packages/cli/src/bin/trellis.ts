#!/usr/bin/env node
import { runCli } from '../cli.js';

const code = await runCli(process.argv.slice(2));
// Exit now: a prompt or an aborted stream may leave stdin or a socket open, and on Linux stdout
// and stderr writes to pipes and terminals are synchronous, so nothing printed is lost.
process.exit(code);
