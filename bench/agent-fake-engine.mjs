#!/usr/bin/env node
/**
 * A stand-in for `tofu` in bench/agent.mjs: answers the commands the agent runs, and on `plan`
 * writes `TF_VAR_bytes` bytes of 100-byte lines to stdout (or wherever stdout points), recording
 * when it started and finished writing in `TF_VAR_timing` (a file) when that is set.
 */
import { writeFileSync } from 'node:fs';

const [command, ...args] = process.argv.slice(2);
const LINE = 100;

async function emit(total) {
  const block = Buffer.alloc(1_000_000);
  for (let i = 0; i < block.length / LINE; i++) {
    block.write(`line ${String(i).padStart(7, '0')} ${'x'.repeat(LINE - 14)}\n`, i * LINE, 'latin1');
  }
  let left = total;
  while (left > 0) {
    const piece = left >= block.length ? block : block.subarray(0, left);
    left -= piece.length;
    if (!process.stdout.write(piece)) await new Promise((resolve) => process.stdout.once('drain', resolve));
  }
}

switch (command) {
  case 'init':
    process.stderr.write('fake engine initialized\n');
    break;
  case 'plan': {
    const out = args.find((arg) => arg.startsWith('-out='));
    if (out) writeFileSync(out.slice('-out='.length), 'fake plan\n');
    const started = Date.now();
    await emit(Number(process.env.TF_VAR_bytes ?? 0));
    if (process.env.TF_VAR_timing)
      writeFileSync(process.env.TF_VAR_timing, JSON.stringify({ started, ended: Date.now() }));
    break;
  }
  case 'show':
    process.stdout.write('{"resource_changes":[]}\n');
    break;
  case 'apply':
  case 'destroy':
    process.stdout.write('fake apply complete\n');
    break;
  case 'output':
    process.stdout.write('{}\n');
    break;
  default:
    process.stderr.write(`fake engine: unknown command ${command}\n`);
    process.exit(1);
}
