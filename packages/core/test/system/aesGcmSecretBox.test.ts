import { AesGcmSecretBox, UnauthorizedError } from '@trellis/core';
import { describe, expect, it } from 'vitest';
import { expectFailure } from '../usecases/helpers.js';

const keyA = new Uint8Array(32).fill(1);
const keyB = new Uint8Array(32).fill(2);

describe('AesGcmSecretBox', () => {
  it('seals to an opaque versioned text that opens to the plaintext, fresh each time', async () => {
    const box = new AesGcmSecretBox([keyA]);
    const first = await box.seal('gho_secret', 'identity:github:1');
    const second = await box.seal('gho_secret', 'identity:github:1');
    expect(first).toMatch(/^v1\.[\w-]{8}\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(first).not.toContain('gho_secret');
    expect(second).not.toBe(first);
    expect(await box.open(first, 'identity:github:1')).toBe('gho_secret');
  });

  it('refuses another context, a flipped bit and an unknown key (secret_unreadable)', async () => {
    const box = new AesGcmSecretBox([keyA]);
    const sealed = await box.seal('token', 'identity:github:1');
    await expectFailure(box.open(sealed, 'identity:github:2'), UnauthorizedError, 'secret_unreadable');
    const parts = sealed.split('.');
    const body = Buffer.from(parts[3] as string, 'base64url');
    body[0] = (body[0] as number) ^ 1;
    parts[3] = body.toString('base64url');
    await expectFailure(box.open(parts.join('.'), 'identity:github:1'), UnauthorizedError, 'secret_unreadable');
    await expectFailure(new AesGcmSecretBox([keyB]).open(sealed, 'identity:github:1'), UnauthorizedError);
    await expectFailure(box.open('plaintext-token', 'identity:github:1'), UnauthorizedError, 'secret_unreadable');
  });

  it('rotates: the first key seals, every key opens', async () => {
    const old = await new AesGcmSecretBox([keyA]).seal('old', 'c');
    const rotated = new AesGcmSecretBox([keyB, keyA]);
    expect(await rotated.open(old, 'c')).toBe('old');
    expect(await new AesGcmSecretBox([keyB]).open(await rotated.seal('new', 'c'), 'c')).toBe('new');
  });

  it('derives a stable key from a server secret', async () => {
    const sealed = await AesGcmSecretBox.fromSecret('a-server-secret-of-32-bytes-or-more!!').seal('t', 'c');
    expect(await AesGcmSecretBox.fromSecret('a-server-secret-of-32-bytes-or-more!!').open(sealed, 'c')).toBe('t');
    await expectFailure(
      AesGcmSecretBox.fromSecret('another-secret-of-32-bytes-or-more!!!').open(sealed, 'c'),
      UnauthorizedError,
    );
  });

  it('refuses keys that are not 32 bytes', () => {
    expect(() => new AesGcmSecretBox([new Uint8Array(16)])).toThrow(/32 bytes/);
    expect(() => new AesGcmSecretBox([])).toThrow();
  });
});
