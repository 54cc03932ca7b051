import {
  ConflictError,
  coreServices,
  CryptoRandom,
  DomainError,
  ForbiddenError,
  isDomainError,
  isUuid,
  NotFoundError,
  RateLimitedError,
  SystemClock,
  TooLargeError,
  UnauthorizedError,
  UnavailableError,
  ValidationError,
} from '@trellis/core';
import { describe, expect, it } from 'vitest';

describe('domain errors', () => {
  it.each([
    [new ValidationError('bad', [{ path: 'a', message: 'm' }]), 'validation', 'validation_failed', 'ValidationError'],
    [new UnauthorizedError('invalid_token', 'no'), 'unauthorized', 'invalid_token', 'UnauthorizedError'],
    [new ForbiddenError('not_yours', 'no'), 'forbidden', 'not_yours', 'ForbiddenError'],
    [new NotFoundError('cloud_identity'), 'not_found', 'cloud_identity_not_found', 'NotFoundError'],
    [new ConflictError('invalid_transition', 'no'), 'conflict', 'invalid_transition', 'ConflictError'],
    [new TooLargeError('artifact_too_large', 'big', 10), 'too_large', 'artifact_too_large', 'TooLargeError'],
    [new RateLimitedError('slow down', 5), 'rate_limited', 'rate_limited', 'RateLimitedError'],
    [new UnavailableError('database_unavailable', 'down'), 'unavailable', 'database_unavailable', 'UnavailableError'],
  ])('%s has kind %s, code %s and its class name', (error, kind, code, name) => {
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toBeInstanceOf(Error);
    expect(isDomainError(error)).toBe(true);
    expect(error.kind).toBe(kind);
    expect(error.code).toBe(code);
    expect(error.name).toBe(name);
    expect(error.code).toMatch(/^[a-z]+(_[a-z]+)*$/);
  });

  it('a not-found error names its resource in words', () => {
    const error = new NotFoundError('plan_artifact');
    expect(error.message).toBe('plan artifact not found');
    expect(error.resource).toBe('plan_artifact');
    expect(new NotFoundError('plan_job', 'plan_job_not_found', 'plan job not found').code).toBe('plan_job_not_found');
  });

  it('carry their details and cause', () => {
    expect(new ValidationError('bad').fields).toEqual([]);
    expect(new ValidationError('x', [], 'authorization_pending').code).toBe('authorization_pending');
    expect(new TooLargeError('c', 'm', 42).limitBytes).toBe(42);
    expect(new RateLimitedError('m', 7).retryAfterSeconds).toBe(7);
    const cause = new Error('ECONNREFUSED');
    expect(new UnavailableError('database_unavailable', 'down', { cause }).cause).toBe(cause);
    expect(isDomainError(new Error('plain'))).toBe(false);
  });
});

describe('system adapters and service refs', () => {
  it('CryptoRandom gives strong bytes and v4 UUIDs', () => {
    const random = new CryptoRandom();
    expect(random.bytes(32)).toHaveLength(32);
    expect(Buffer.from(random.bytes(32)).equals(Buffer.from(random.bytes(32)))).toBe(false);
    const uuid = random.uuid();
    expect(isUuid(uuid)).toBe(true);
    expect(uuid[14]).toBe('4');
  });

  it('SystemClock tells the time', () => {
    const before = Date.now();
    const now = new SystemClock().now().getTime();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now());
  });

  it('service refs have stable, distinct ids and cannot be changed', () => {
    const ids = Object.values(coreServices).map((ref) => ref.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(coreServices.unitOfWork.id).toBe('trellis.core.unit-of-work');
    expect(coreServices.useCases.id).toBe('trellis.core.use-cases');
    expect(Object.isFrozen(coreServices.clock)).toBe(true);
  });
});
