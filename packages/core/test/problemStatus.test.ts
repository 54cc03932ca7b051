import { describe, expect, it } from 'vitest';
import {
  ConflictError,
  ForbiddenError,
  PROBLEM_CODES,
  statusOfError,
  UnauthorizedError,
  ValidationError,
} from '../src/index.js';

describe('statusOfError: one status for a refusal, in the API and on a web page', () => {
  it("is the status core's registry gives the code, whatever the error's kind", () => {
    expect(statusOfError(new ConflictError('plan_stale', 'the configuration changed'))).toBe(
      PROBLEM_CODES.plan_stale.status,
    );
    // A registered code raised as another kind is still sent with its registered status.
    expect(statusOfError(new ForbiddenError('plan_stale', 'odd'))).toBe(PROBLEM_CODES.plan_stale.status);
  });

  it("is the kind's status for a code the registry does not hold", () => {
    expect(statusOfError(new ValidationError('bad', [], 'not_a_registered_code'))).toBe(400);
    expect(statusOfError(new ConflictError('not_a_registered_code', 'busy'))).toBe(409);
  });

  it("keeps the kind's status for a code registered with a second status (LEGACY_SECOND_STATUS)", () => {
    expect(statusOfError(new UnauthorizedError('invalid_grant', 'reused'))).toBe(401);
    expect(statusOfError(new ValidationError('bad', [], 'invalid_grant'))).toBe(PROBLEM_CODES.invalid_grant.status);
  });
});
