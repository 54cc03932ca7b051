import { DomainError } from '@trellis/core';
import { expect } from 'vitest';

type ErrorClass<E> = abstract new (...args: never[]) => E;

/** Awaits `promise`, expects it to reject with `type` (and `code` when given), returns the error. */
export async function expectFailure<E extends DomainError>(
  promise: Promise<unknown>,
  type: ErrorClass<E>,
  code?: string,
): Promise<E> {
  let outcome: { error: unknown } | { value: unknown };
  try {
    outcome = { value: await promise };
  } catch (error) {
    outcome = { error };
  }
  if (!('error' in outcome)) throw new Error(`expected a ${type.name}, but it resolved`);
  expect(outcome.error).toBeInstanceOf(type);
  expect(outcome.error).toBeInstanceOf(DomainError);
  if (code !== undefined) expect((outcome.error as DomainError).code).toBe(code);
  return outcome.error as E;
}

/** Same, for a function that throws synchronously. */
export function expectThrown<E extends DomainError>(run: () => unknown, type: ErrorClass<E>, code?: string): E {
  let thrown: unknown;
  try {
    run();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(type);
  if (code !== undefined) expect((thrown as DomainError).code).toBe(code);
  return thrown as E;
}

/** A UUID that names nothing. */
export const UNKNOWN_ID = '9f9f9f9f-9f9f-4f9f-8f9f-9f9f9f9f9f9f';
