import type { OrgRole } from './roles.js';

/**
 * Domain errors with stable snake_case codes. Only `http` maps them to statuses; a code, once
 * published, is never reassigned to another meaning.
 */

export interface FieldIssue {
  /** Dotted path of the failing field, e.g. `source.url`. */
  path: string;
  message: string;
}

export abstract class DomainError extends Error {
  abstract readonly kind:
    | 'validation'
    | 'unauthorized'
    | 'forbidden'
    | 'not_found'
    | 'conflict'
    | 'too_large'
    | 'unprocessable'
    | 'rate_limited'
    | 'bad_gateway'
    | 'unavailable'
    | 'insufficient_storage';

  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Malformed input: a bad UUID, an unknown enum value, a missing field (`400`). */
export class ValidationError extends DomainError {
  readonly kind = 'validation';
  constructor(
    message: string,
    readonly fields: FieldIssue[] = [],
    code = 'validation_failed',
  ) {
    super(code, message);
  }
}

/**
 * Reads fields one by one and keeps every failure in `issues` (a `ValidationError`'s field issues,
 * or its message at `path`), so a person fixes them all in one go; any other error passes through.
 */
export function fieldReader(issues: FieldIssue[]): <T>(path: string, read: () => T) => T | undefined {
  return (path, read) => {
    try {
      return read();
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      issues.push(...(error.fields.length > 0 ? error.fields : [{ path, message: error.message }]));
      return undefined;
    }
  };
}

/** Well-formed, but its content is refused (`422`), e.g. a policy module that does not compile. */
export class UnprocessableError extends DomainError {
  readonly kind = 'unprocessable';
}

/** No or bad credentials (`401`). The message never says which part was wrong. */
export class UnauthorizedError extends DomainError {
  readonly kind = 'unauthorized';
}

/** Authenticated but not allowed (`403`). */
export class ForbiddenError extends DomainError {
  readonly kind = 'forbidden';
}

/**
 * A member of an organization whose role is too low for the action (`403 insufficient_role`). The
 * problem names the least role the action needs and the caller's.
 */
export class InsufficientRoleError extends ForbiddenError {
  constructor(
    readonly requiredRole: OrgRole,
    readonly role: OrgRole,
  ) {
    super('insufficient_role', `this needs the role ${requiredRole} in the organization; yours is ${role}`);
  }
}

/** Missing, or belonging to another owner: the two are indistinguishable by design (`404`). */
export class NotFoundError extends DomainError {
  readonly kind = 'not_found';
  constructor(
    readonly resource: string,
    code = `${resource}_not_found`,
    message = `${resource.replaceAll('_', ' ')} not found`,
  ) {
    super(code, message);
  }
}

/** The request is well-formed but clashes with the current state (`409`). */
export class ConflictError extends DomainError {
  readonly kind = 'conflict';
}

/**
 * A log batch that starts past the next `seq` the job's log holds (`409 log_seq_gap`): the problem
 * names that `seq` as `expected_seq`, so an agent whose earlier batches the control plane lost
 * (a database that lost its last commits) can say so in their place and go on.
 */
export class LogSeqGapError extends ConflictError {
  constructor(
    readonly expectedSeq: number,
    firstSeq: number,
  ) {
    super(
      'log_seq_gap',
      `the batch starts at seq ${firstSeq} but the log holds up to ${expectedSeq - 1}; send seq ${expectedSeq} first`,
    );
  }
}

/** One failed policy as a `policy_failed` problem names it. */
export interface FailedPolicy {
  policy_id: string;
  version: number;
  name: string;
  messages: string[];
}

/**
 * A DEPLOY of a plan that failed a mandatory policy and is not overridden (`409 policy_failed`,
 * issue 15). The problem lists the failed policies and their messages as `failed_policies`.
 */
export class PolicyFailedError extends ConflictError {
  constructor(readonly failedPolicies: FailedPolicy[]) {
    super(
      'policy_failed',
      `the plan failed ${failedPolicies.length === 1 ? 'a mandatory policy' : `${failedPolicies.length} mandatory policies`} (${failedPolicies
        .map((policy) => `${policy.name}: ${policy.messages.join('; ') || 'denied'}`)
        .join(' | ')}); an admin may override it`,
    );
  }
}

/** A body or chunk over its limit (`413`). */
export class TooLargeError extends DomainError {
  readonly kind = 'too_large';
  constructor(
    code: string,
    message: string,
    readonly limitBytes: number,
  ) {
    super(code, message);
  }
}

/** Too many requests, or too many of something open at once (`429` with `Retry-After`). */
export class RateLimitedError extends DomainError {
  readonly kind = 'rate_limited';
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
    code = 'rate_limited',
  ) {
    super(code, message);
  }
}

/**
 * A server Trellis asked on a client's behalf (an upstream registry of the provider mirror)
 * failed, or answered something that cannot be trusted (`502`).
 */
export class BadGatewayError extends DomainError {
  readonly kind = 'bad_gateway';
}

/** A dependency (database, object storage) cannot be reached or refused us (`503`). */
export class UnavailableError extends DomainError {
  readonly kind = 'unavailable';
}

/**
 * A store the control plane writes to is full (`507`): the disk of the filesystem artifact store,
 * or object storage that refuses writes for want of space. Nothing was stored, nothing stored
 * before is touched, and retrying does not help until someone frees space.
 */
export class InsufficientStorageError extends DomainError {
  readonly kind = 'insufficient_storage';
}

export function isDomainError(error: unknown): error is DomainError {
  return error instanceof DomainError;
}
