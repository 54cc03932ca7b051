import type { DomainError } from './errors.js';
import { LEGACY_SECOND_STATUS, problemStatusOf } from './problemCodes.js';

/** The status of each kind of domain error, for a code the registry does not hold. */
const STATUS_OF_KIND: Record<DomainError['kind'], number> = {
  validation: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  unprocessable: 422,
  rate_limited: 429,
  bad_gateway: 502,
  unavailable: 503,
  insufficient_storage: 507,
};

/**
 * The HTTP status a refusal is answered with, wherever it is shown (the API's problem, a web page):
 * the status core's registry gives its code (only the codes of `LEGACY_SECOND_STATUS` keep their
 * error's kind when it differs), else its kind's.
 */
export function statusOfError(error: DomainError): number {
  const byKind = STATUS_OF_KIND[error.kind];
  const registered = problemStatusOf(error.code);
  if (registered === undefined) return byKind;
  const legacy = (LEGACY_SECOND_STATUS as Record<string, { status: number } | undefined>)[error.code];
  return legacy?.status === byKind ? byKind : registered;
}
