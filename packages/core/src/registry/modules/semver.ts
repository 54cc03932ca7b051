import { ValidationError } from '../../domain/errors.js';

/**
 * Semantic versions of registry modules (semver.org 2.0.0, as the registry protocol and the CLI's
 * version constraints read them), without build metadata: `1.2.0` and `1.2.0+a` would be the same
 * version to a constraint, so a published version is named by its precedence alone.
 */
const SEMVER =
  /^(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?$/;

export interface SemVer {
  major: number;
  minor: number;
  patch: number;
  prerelease: readonly string[];
}

export function parseSemVer(value: string): SemVer | null {
  const match = value.length <= 128 ? SEMVER.exec(value) : null;
  if (!match) return null;
  return {
    major: Number(match[1]),
    minor: Number(match[2]),
    patch: Number(match[3]),
    prerelease: match[4] === undefined ? [] : match[4].split('.'),
  };
}

/** A version as published, or `400 validation_failed` naming what was typed. */
export function requireModuleVersion(value: unknown, field = 'version'): string {
  if (typeof value === 'string' && parseSemVer(value)) return value;
  throw new ValidationError(
    `${field} ${JSON.stringify(value)} is not MAJOR.MINOR.PATCH[-PRERELEASE] (semver, such as 1.2.0; no "v", no build metadata)`,
    [{ path: field, message: `${JSON.stringify(value)} is not a semantic version (MAJOR.MINOR.PATCH[-PRERELEASE])` }],
  );
}

/** Semver precedence: negative when `a` comes before `b`. */
export function compareSemVer(a: string, b: string): number {
  const x = parseSemVer(a);
  const y = parseSemVer(b);
  if (!x || !y) return a.localeCompare(b);
  const core = x.major - y.major || x.minor - y.minor || x.patch - y.patch;
  if (core !== 0) return core;
  if (x.prerelease.length === 0 || y.prerelease.length === 0) return y.prerelease.length - x.prerelease.length;
  for (let i = 0; i < Math.min(x.prerelease.length, y.prerelease.length); i += 1) {
    const p = x.prerelease[i] as string;
    const q = y.prerelease[i] as string;
    if (p === q) continue;
    const pn = /^\d+$/.test(p);
    const qn = /^\d+$/.test(q);
    if (pn && qn) return Number(p) - Number(q);
    if (pn !== qn) return pn ? -1 : 1;
    return p < q ? -1 : 1;
  }
  return x.prerelease.length - y.prerelease.length;
}

/** The version a module shows as its latest: the highest release, or the highest pre-release if none. */
export function latestVersion(versions: readonly string[]): string | null {
  const sorted = [...versions].sort(compareSemVer);
  const releases = sorted.filter((version) => parseSemVer(version)?.prerelease.length === 0);
  return releases.at(-1) ?? sorted.at(-1) ?? null;
}
