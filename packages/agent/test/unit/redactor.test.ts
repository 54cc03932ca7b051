import { describe, expect, it } from 'vitest';
import { SecretSet, StreamRedactor } from '../../src/logs/Redactor.js';

function secrets(...values: string[]): SecretSet {
  const set = new SecretSet();
  for (const value of values) set.add(value);
  return set;
}

/** Feeds `text` to a redactor in pieces of `size` characters, as pipes deliver it. */
function feed(redactor: StreamRedactor, text: string, size: number, drainEvery = 0): string {
  let out = '';
  for (let i = 0, n = 0; i < text.length; i += size, n++) {
    out += redactor.push(text.slice(i, i + size));
    if (drainEvery > 0 && n % drainEvery === 0) out += redactor.drain();
  }
  return out + redactor.end();
}

describe('redaction of secrets in the log', () => {
  it('replaces every occurrence of every secret, the longest first', () => {
    const set = secrets('hunter22', 'hunter22-admin');
    expect(set.redact('pw=hunter22 admin=hunter22-admin again hunter22')).toBe('pw=*** admin=*** again ***');
  });

  it('ignores values too short to be secrets and treats regex characters literally', () => {
    const set = secrets('abc', 'a.b*c+(d)');
    expect(set.redact('abc a.b*c+(d) aXbbc')).toBe('abc *** aXbbc');
  });

  it('matches a multi-line secret line by line', () => {
    const set = secrets('-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0B\n-----END KEY-----');
    expect(set.redact('key:\nMIIEvQIBADANBgkqhkiG9w0B\n')).toBe('key:\n***\n');
  });

  it('catches a secret split across reads at every possible boundary', () => {
    const secret = 'AKIAIOSFODNN7EXAMPLE';
    const text = `line one\nthe key is ${secret} ok\nno newline at the end ${secret}`;
    for (let size = 1; size <= text.length; size++) {
      for (const drainEvery of [0, 1, 3]) {
        const out = feed(new StreamRedactor(secrets(secret)), text, size, drainEvery);
        expect(out).toBe(text.replaceAll(secret, '***'));
      }
    }
  });

  it('releases a long partial line without waiting for its newline, keeping only a short tail', () => {
    const redactor = new StreamRedactor(secrets('0123456789'), 100);
    const released = redactor.push('x'.repeat(250));
    expect(released.length).toBeGreaterThanOrEqual(250 - 9);
    expect(released + redactor.end()).toBe('x'.repeat(250));
  });

  it('passes text through untouched when there is no secret', () => {
    const redactor = new StreamRedactor(new SecretSet());
    expect(redactor.push('partial')).toBe('');
    expect(redactor.drain()).toBe('partial');
  });

  it('learns secrets added while the stream runs', () => {
    const set = secrets('first-secret');
    const redactor = new StreamRedactor(set);
    expect(redactor.push('first-secret\n')).toBe('***\n');
    set.add('second-secret');
    expect(redactor.push('second-secret first-secret\n')).toBe('*** ***\n');
  });
});
