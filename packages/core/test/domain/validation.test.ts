import { isSemver, isUuid, optionalUuid, requireName, requireUuid, ValidationError } from '@trellis/core';
import { describe, expect, it } from 'vitest';

describe('validation', () => {
  it('accepts UUIDs of any version 1-8 with the RFC variant, in either case', () => {
    expect(isUuid('8d5b1f0e-8c9a-4b1e-9e2f-0123456789ab')).toBe(true);
    expect(isUuid('8D5B1F0E-8C9A-4B1E-9E2F-0123456789AB')).toBe(true);
    expect(isUuid('8d5b1f0e-8c9a-7b1e-ae2f-0123456789ab')).toBe(true);
  });

  it.each([
    '',
    'not-a-uuid',
    '8d5b1f0e8c9a4b1e9e2f0123456789ab',
    '8d5b1f0e-8c9a-0b1e-9e2f-0123456789ab',
    '8d5b1f0e-8c9a-4b1e-ce2f-0123456789ab',
    ' 8d5b1f0e-8c9a-4b1e-9e2f-0123456789ab',
    '8d5b1f0e-8c9a-4b1e-9e2f-0123456789ab\n',
  ])('refuses %j as a UUID', (value) => {
    expect(isUuid(value)).toBe(false);
    expect(() => requireUuid(value, 'id')).toThrow(ValidationError);
  });

  it('normalises a UUID to lower case and names the field when it fails', () => {
    expect(requireUuid('8D5B1F0E-8C9A-4B1E-9E2F-0123456789AB', 'id')).toBe('8d5b1f0e-8c9a-4b1e-9e2f-0123456789ab');
    expect(() => requireUuid(42, 'vineyard_id')).toThrow(
      expect.objectContaining({
        code: 'validation_failed',
        fields: [{ path: 'vineyard_id', message: 'must be a UUID' }],
      }),
    );
    expect(optionalUuid(undefined, 'x')).toBeNull();
    expect(optionalUuid(null, 'x')).toBeNull();
    expect(() => optionalUuid('nope', 'x')).toThrow(ValidationError);
  });

  it.each(['a', 'web', 'Web-1', 'v1.2_beta', '0', 'x'.repeat(100)])('accepts the name %j', (name) => {
    expect(requireName(name, 'name')).toBe(name);
  });

  it.each(['', '-web', '.hidden', '_x', 'has space', 'a/b', 'a\\b', 'x'.repeat(101), 'émoji', 42, null])(
    'refuses the name %j',
    (name) => {
      expect(() => requireName(name, 'name')).toThrow(
        expect.objectContaining({ code: 'validation_failed', fields: [expect.objectContaining({ path: 'name' })] }),
      );
    },
  );

  it.each(['1.0.0', '0.0.1', '10.20.30', '1.0.0-rc.1', '1.0.0-alpha+build.5', '1.0.0+20130313144700'])(
    'accepts the version %s',
    (version) => expect(isSemver(version)).toBe(true),
  );

  it.each(['1', '1.0', 'v1.0.0', '01.0.0', '1.0.0-', '1.0.0-01', '1.0.0 ', '', 1])('refuses the version %j', (v) => {
    expect(isSemver(v)).toBe(false);
  });
});
