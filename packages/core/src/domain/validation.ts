import { ValidationError } from './errors.js';

/** The UUIDs core accepts (versions 1 to 8, RFC 9562 variant), any case. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
const UUID = UUID_PATTERN;

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}

/** Normalises a UUID to lower case, or throws a `validation_failed` naming the field. */
export function requireUuid(value: unknown, field: string): string {
  if (!isUuid(value)) {
    throw new ValidationError(`${field} must be a UUID`, [{ path: field, message: 'must be a UUID' }]);
  }
  return value.toLowerCase();
}

export function optionalUuid(value: unknown, field: string): string | null {
  return value === undefined || value === null ? null : requireUuid(value, field);
}

/** Names of vineyards, vines, projects and workers (see `requireName`). */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
export const MAX_NAME_LENGTH = 100;
const NAME = NAME_PATTERN;

/** `NAME_PATTERN` said for people, in every message that refuses a name (never the pattern). */
export const NAME_RULE = "must be 1 to 100 letters, digits, '.', '_' or '-', starting with a letter or digit";

/** Names of vineyards, vines, projects and workers: 1–100 characters, no spaces or slashes. */
export function requireName(value: unknown, field: string): string {
  if (typeof value !== 'string' || !NAME.test(value)) {
    throw new ValidationError(`${field} ${NAME_RULE}`, [{ path: field, message: NAME_RULE }]);
  }
  return value;
}

/** Semantic versions (semver.org 2.0.0), as worker releases are numbered. */
export const SEMVER_PATTERN =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

export function isSemver(value: unknown): value is string {
  return typeof value === 'string' && SEMVER_PATTERN.test(value);
}
