/**
 * Issue 11 §6: every problem `code` the sources can send is in core's registry
 * (`PROBLEM_CODES`), with the status the thrower gives it; no code has two statuses.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ConflictError,
  InsufficientStorageError,
  LEGACY_SECOND_STATUS,
  PROBLEM_CODES,
  UnauthorizedError,
  UnavailableError,
  ValidationError,
} from '@trellis/core';
import { problemFromDomainError } from '@trellis/http';
import { describe, expect, it } from 'vitest';

/** The status each domain error class has on the wire (http's mapping by `kind`). */
const CLASS_STATUS: Record<string, number> = {
  ValidationError: 400,
  UnauthorizedError: 401,
  ForbiddenError: 403,
  NotFoundError: 404,
  ConflictError: 409,
  TooLargeError: 413,
  UnprocessableError: 422,
  RateLimitedError: 429,
  BadGatewayError: 502,
  UnavailableError: 503,
  InsufficientStorageError: 507,
};

interface ThrownCode {
  code: string;
  status: number;
  where: string;
}

/** The text between `(` at `open` and its matching `)`, split at top-level commas. */
function argumentsAt(source: string, open: number): string[] {
  const args: string[] = [];
  let depth = 0;
  let quote: string | null = null;
  let current = '';
  for (let i = open; i < source.length; i++) {
    const c = source[i] as string;
    if (quote) {
      current += c;
      if (c === '\\') current += source[++i] ?? '';
      else if (c === quote) quote = null;
      continue;
    }
    if (c === "'" || c === '"' || c === '`') {
      quote = c;
      current += c;
    } else if (c === '(' || c === '[' || c === '{') {
      if (depth++ > 0) current += c;
    } else if (c === ')' || c === ']' || c === '}') {
      if (--depth === 0) break;
      current += c;
    } else if (c === ',' && depth === 1) {
      args.push(current.trim());
      current = '';
    } else current += c;
  }
  if (current.trim()) args.push(current.trim());
  return args;
}

/** The code a literal argument names; both of a `cond ? 'a' : 'b'`. */
function literals(arg: string | undefined): string[] | null {
  if (arg === undefined) return null;
  const single = /^'([a-z][a-z0-9_]*)'$/.exec(arg);
  if (single) return [single[1] as string];
  const choice = /^[\w.!]+ \? '([a-z][a-z0-9_]*)' : '([a-z][a-z0-9_]*)'$/.exec(arg);
  return choice ? [choice[1] as string, choice[2] as string] : null;
}

/** The codes of store-sql's unique keys, which `toDomainError` throws as `failure.key.code`. */
function uniqueKeyCodes(): string[] {
  const schema = readFileSync(new URL('../packages/store-sql/src/schema.ts', import.meta.url), 'utf8');
  return [...schema.matchAll(/^\s+code: '([a-z_]+)',$/gm)].map((match) => match[1] as string);
}

/** Every `new XxxError(…)` of the domain error classes and every `problem(status, 'code', …)`. */
function thrownCodes(source: string, where: string): ThrownCode[] {
  const found: ThrownCode[] = [];
  for (const match of source.matchAll(/new (\w+Error)\(/g)) {
    const status = CLASS_STATUS[match[1] as string];
    if (status === undefined) continue;
    const args = argumentsAt(source, (match.index as number) + match[0].length - 1);
    let codes: string[] | null;
    switch (match[1]) {
      case 'ValidationError':
        codes = args.length > 2 ? literals(args[2]) : ['validation_failed'];
        break;
      case 'RateLimitedError':
        codes = args.length > 2 ? literals(args[2]) : ['rate_limited'];
        break;
      case 'NotFoundError':
        codes = args.length > 1 ? literals(args[1]) : (literals(args[0])?.map((r) => `${r}_not_found`) ?? null);
        break;
      default:
        codes = args[0] === 'failure.key.code' ? uniqueKeyCodes() : literals(args[0]);
    }
    for (const code of codes ?? [`<not a literal: ${args[0]}>`]) found.push({ code, status, where });
  }
  for (const match of source.matchAll(/\bproblem\(\s*(\d{3}),\s*'([a-z0-9_]+)'/g)) {
    found.push({ code: match[2] as string, status: Number(match[1]), where });
  }
  return found;
}

function sourcesOf(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir)) {
    const full = join(dir, entry);
    if (statSync(full).isDirectory()) files.push(...sourcesOf(full));
    else if (entry.endsWith('.ts') && !entry.endsWith('.d.ts')) files.push(full);
  }
  return files;
}

function repositoryCodes(): ThrownCode[] {
  const root = fileURLToPath(new URL('../packages/', import.meta.url));
  return readdirSync(root)
    .filter((name) => name !== 'testkit' && statSync(join(root, name, 'src'), { throwIfNoEntry: false }))
    .flatMap((name) =>
      sourcesOf(join(root, name, 'src')).flatMap((file) =>
        thrownCodes(readFileSync(file, 'utf8'), file.slice(root.length)),
      ),
    );
}

describe('problem codes (issue 11 §6)', () => {
  const registry: Record<string, { status: number; meaning: string }> = PROBLEM_CODES;
  const legacy: Record<string, { status: number; meaning: string } | undefined> = LEGACY_SECOND_STATUS;

  it('finds the codes of every kind of throw site', () => {
    const source = `
      throw new NotFoundError('job');
      throw new NotFoundError('plan_job', 'plan_job_not_found', 'x');
      throw new ValidationError('bad', []);
      throw new ValidationError(\`bad \${x}\`, [{ path: 'a', message: 'b' }], 'invalid_lock');
      throw new RateLimitedError(message, 5, 'too_many_streams');
      throw new UnauthorizedError(expired ? 'token_expired' : 'invalid_token', 'x');
      throw new ConflictError(
        'state_locked',
        'locked, see (x)',
      );
      sendProblem(res, problem(415, 'unsupported_media_type', 'x'));
      throw new Error('not a problem');`;
    expect(thrownCodes(source, 'x.ts').map(({ code, status }) => `${status} ${code}`)).toEqual([
      '404 job_not_found',
      '404 plan_job_not_found',
      '400 validation_failed',
      '400 invalid_lock',
      '429 too_many_streams',
      '401 token_expired',
      '401 invalid_token',
      '409 state_locked',
      '415 unsupported_media_type',
    ]);
  });

  it('has every code thrown anywhere in the sources, with the status it is thrown with', () => {
    const thrown = repositoryCodes();
    expect(thrown.length).toBeGreaterThan(100);
    const wrong = thrown
      .filter(({ code, status }) => registry[code]?.status !== status && legacy[code]?.status !== status)
      .map(({ code, status, where }) =>
        registry[code] === undefined
          ? `${where}: ${code} (${status}) is not in PROBLEM_CODES`
          : `${where}: ${code} is thrown as ${status}, registered as ${registry[code].status}`,
      );
    expect(wrong).toEqual([]);
  });

  it('gives each code one status and a one-line meaning', () => {
    for (const [code, { status, meaning }] of Object.entries(registry)) {
      expect(code).toMatch(/^[a-z][a-z0-9_]*$/);
      expect(status >= 400 && status < 600, code).toBe(true);
      expect(meaning.length > 0 && !meaning.includes('\n'), code).toBe(true);
    }
  });

  it('keeps the second statuses published before the registry, and lets no other code gain one', () => {
    expect(Object.keys(legacy).sort()).toEqual(['invalid_grant', 'provider_not_configured', 'unsupported_media_type']);
    for (const [code, second] of Object.entries(legacy)) {
      expect(registry[code]?.status, code).not.toBe(second?.status);
    }
  });

  it("is what http's error mapping sends", () => {
    // The registry decides; an error's kind only for a code's published second status.
    expect(problemFromDomainError(new ConflictError('job_not_found', 'no such job')).status).toBe(404);
    expect(problemFromDomainError(new UnavailableError('database_unavailable', 'down')).status).toBe(503);
    expect(problemFromDomainError(new ValidationError('used', [], 'invalid_grant')).status).toBe(400);
    expect(problemFromDomainError(new UnauthorizedError('invalid_grant', 'reused')).status).toBe(401);
    expect(problemFromDomainError(new ConflictError('not_registered_yet', 'x')).status).toBe(409);
    expect(problemFromDomainError(new InsufficientStorageError('insufficient_storage', 'full'))).toMatchObject({
      status: 507,
      title: 'Insufficient Storage',
      code: 'insufficient_storage',
    });
  });
});
