/**
 * Which failures of a statement mean its Postgres connection is gone (it is then destroyed rather
 * than pooled, so the next unit of work gets a new one): pg's own errors, and the server's goodbye
 * when it arrives as the statement's answer instead of before it (a terminated backend).
 */
import { describe, expect, it } from 'vitest';
import { connectionBroke } from '../src/dialects/postgres/pgTransaction.js';

describe('a broken Postgres connection', () => {
  it.each([
    ['pg lost the socket (no SQLSTATE)', new Error('Connection terminated unexpectedly')],
    ['a system error', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })],
    ['the backend was terminated (57P01)', Object.assign(new Error('terminating connection'), { code: '57P01' })],
    ['the server crashed (57P02)', Object.assign(new Error('crash shutdown'), { code: '57P02' })],
    ['the server is starting (57P03)', Object.assign(new Error('cannot connect now'), { code: '57P03' })],
    ['a connection exception (08006)', Object.assign(new Error('connection failure'), { code: '08006' })],
  ])('is %s', (_name, error) => {
    expect(connectionBroke(error)).toBe(true);
  });

  it.each([
    ['a unique violation (23505)', '23505'],
    ['a serialization failure (40001)', '40001'],
    ['a statement timeout (57014)', '57014'],
  ])('is not %s: the connection answered', (_name, code) => {
    expect(connectionBroke(Object.assign(new Error('refused'), { code }))).toBe(false);
  });
});
