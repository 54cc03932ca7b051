/** How logs, tables and tokens are read and shown, without a server. */
import { Writable } from 'node:stream';
import type { LogChunk } from '@trellis/core';
import pc from 'picocolors';
import { describe, expect, it } from 'vitest';
import { jwtExpiry, TrellisApiError } from '@trellis/client';
import { describeFields } from '../src/fieldIssues.js';
import { LogPrinter } from '../src/follow/LogPrinter.js';
import { renderTable } from '../src/output/table.js';
import { colourEnabled } from '../src/output/Terminal.js';
import { signJwt } from './harness.js';

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: string, done: () => void) {
    this.text += chunk.toString();
    done();
  }
}

let nextId = 1;
function chunk(log_chunk: string, stream_type: LogChunk['stream_type'] = 'STDOUT'): LogChunk {
  return { id: nextId++, job_id: 'j', log_chunk, stream_type, created_at: new Date().toISOString() };
}

describe('LogPrinter', () => {
  it('prefixes stderr and system lines without colour, once per line, across chunk boundaries', () => {
    const out = new Capture();
    const printer = new LogPrinter(out, pc.createColors(false));
    printer.write(chunk('Initializing...\nPlan: 1 to add'));
    printer.write(chunk(', 0 to change\n'));
    printer.write(chunk('Warning: deprecated\nsecond', 'STDERR'));
    printer.write(chunk(' half\n', 'STDERR'));
    printer.write(chunk('agent: running plan\n', 'SYSTEM'));
    printer.write(chunk('no newline at the end'));
    printer.finish();
    expect(out.text).toBe(
      [
        'Initializing...',
        'Plan: 1 to add, 0 to change',
        'stderr| Warning: deprecated',
        'stderr| second half',
        'system| agent: running plan',
        'no newline at the end',
        '',
      ].join('\n'),
    );
  });

  it('starts a new line when the stream changes mid-line', () => {
    const out = new Capture();
    const printer = new LogPrinter(out, pc.createColors(false));
    printer.write(chunk('progress...'));
    printer.write(chunk('oops\n', 'STDERR'));
    printer.finish();
    expect(out.text).toBe('progress...\nstderr| oops\n');
  });

  it('colours instead of prefixing when colour is on', () => {
    const out = new Capture();
    const printer = new LogPrinter(out, pc.createColors(true));
    printer.write(chunk('fine\n'));
    printer.write(chunk('bad\n', 'STDERR'));
    printer.write(chunk('note\n', 'SYSTEM'));
    printer.finish();
    expect(out.text).toBe('fine\n\u001b[31mbad\u001b[39m\n\u001b[2mnote\u001b[22m\n');
  });

  it('holds chunks back while paused and prints them in order on resume', () => {
    const out = new Capture();
    const printer = new LogPrinter(out, pc.createColors(false));
    printer.write(chunk('one\n'));
    printer.pause();
    printer.write(chunk('two\n'));
    expect(out.text).toBe('one\n');
    printer.resume();
    printer.write(chunk('three\n'));
    expect(out.text).toBe('one\ntwo\nthree\n');
  });
});

describe('renderTable', () => {
  it('aligns columns by visible width, ignoring colour codes, with no trailing spaces', () => {
    const colours = pc.createColors(true);
    const table = renderTable(
      ['NAME', 'STATUS', 'ID'],
      [
        ['web', colours.green('SUCCESS'), '1'],
        ['database-cluster', colours.red('FAILED'), '22'],
      ],
    );
    // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping colour codes
    const plain = table.replace(/\u001b\[[0-9;]*m/g, '').split('\n');
    expect(plain).toEqual([
      'NAME              STATUS   ID',
      'web               SUCCESS  1',
      'database-cluster  FAILED   22',
    ]);
  });
});

describe('colourEnabled', () => {
  it('follows the terminal, NO_COLOR and FORCE_COLOR', () => {
    expect(colourEnabled({ isTTY: true }, {})).toBe(true);
    expect(colourEnabled({ isTTY: false }, {})).toBe(false);
    expect(colourEnabled({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(colourEnabled({ isTTY: true }, { TERM: 'dumb' })).toBe(false);
    expect(colourEnabled({ isTTY: false }, { FORCE_COLOR: '1' })).toBe(true);
    expect(colourEnabled({ isTTY: false }, { FORCE_COLOR: '1', NO_COLOR: '1' })).toBe(false);
  });
});

describe('jwtExpiry', () => {
  it('reads exp without verifying, and gives null for anything else', () => {
    expect(jwtExpiry(signJwt({ exp: 1_900_000_000 }, 'any-secret'))?.toISOString()).toBe('2030-03-17T17:46:40.000Z');
    expect(jwtExpiry('not-a-jwt')).toBeNull();
    expect(jwtExpiry(signJwt({ sub: 'x' }))).toBeNull();
  });
});

describe('describeFields of a validation problem', () => {
  const problem = (detail: string, errors: { path: string; message: string }[]) =>
    new TrellisApiError({ status: 400, code: 'validation_failed', detail, errors });
  const flags: Record<string, string> = {
    'drift_detection.interval_minutes': '--drift-interval',
    'source.url': '--git',
  };
  const flagFor = (field: string) => flags[field];

  it('names the flag in place of the field the detail names, and says it once', () => {
    const explained = describeFields(
      problem('drift_detection.interval_minutes must be at least 60 minutes', [
        { path: 'body.drift_detection.interval_minutes', message: 'must be at least 60 minutes' },
      ]),
      flagFor,
    );
    expect(explained).toBe('--drift-interval must be at least 60 minutes');
  });

  it('adds the issues the detail does not name, in order, each once, by flag or by field', () => {
    const explained = describeFields(
      problem('the configuration is invalid', [
        { path: 'source.url', message: 'must be a git URL' },
        { path: 'engine.version', message: 'must be a version string' },
        { path: 'source.url', message: 'must be a git URL' },
      ]),
      flagFor,
    );
    expect(explained).toBe(
      'the configuration is invalid (--git must be a git URL; engine.version must be a version string)',
    );
  });

  it('keeps a detail that names no field as it is', () => {
    expect(describeFields(problem('job not found', []), flagFor)).toBe('job not found');
  });
});

describe('triggerDescription', () => {
  it('names a remote run of the stock CLI (issue 27)', async () => {
    const { triggerDescription } = await import('../src/output/format.js');
    expect(triggerDescription({ trigger: { type: 'cli' } })).toBe('tofu CLI (remote run)');
    expect(triggerDescription({ trigger: { type: 'manual' } })).toBe('manual');
  });
});
