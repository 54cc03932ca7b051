import type { Random } from '../ports/Random.js';

/** 256 random bits, like worker tokens. */
export const API_TOKEN_BYTES = 32;
/** What tells an API token apart from a CLI access token (a JWT) in `Authorization: Bearer`. */
export const API_TOKEN_PREFIX = 'trt_';
/** `expires_in_days` bounds; absent, a token never expires. */
export const API_TOKEN_MIN_DAYS = 1;
export const API_TOKEN_MAX_DAYS = 365;
/** A token's `last_used_at` is written at most once per this many seconds, so a busy CI token stays cheap. */
export const API_TOKEN_USE_RECORD_SECONDS = 60;

const API_TOKEN_PATTERN = /^trt_[A-Za-z0-9_-]{43}$/;

/** A new API token, `trt_` + 43 base64url characters. Shown once, stored only as its SHA-256. */
export function generateApiToken(random: Random): string {
  return API_TOKEN_PREFIX + Buffer.from(random.bytes(API_TOKEN_BYTES)).toString('base64url');
}

/** Whether a bearer token is meant as an API token (by its prefix); its form is checked apart. */
export function isApiTokenPrefixed(token: string): boolean {
  return token.startsWith(API_TOKEN_PREFIX);
}

/** Whether `token` has the exact form of an API token. */
export function isApiTokenForm(token: unknown): token is string {
  return typeof token === 'string' && API_TOKEN_PATTERN.test(token);
}

/** When a token made at `now` for `days` days expires. */
export function apiTokenExpiry(now: Date, days: number): string {
  return new Date(now.getTime() + days * 86_400_000).toISOString();
}
