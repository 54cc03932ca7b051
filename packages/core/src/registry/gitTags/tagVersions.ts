/**
 * Semantic versioning 2.0.0 (semver.org's own expression): what the module registry protocol
 * serves as a version. A tag publishes when it is such a version, with or without a leading `v`.
 */
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

/** The version a tag publishes (`v1.2.0` and `1.2.0` publish `1.2.0`), or null for any other tag. */
export function moduleVersionOfTag(tag: string): string | null {
  const version = tag.startsWith('v') ? tag.slice(1) : tag;
  return SEMVER.test(version) ? version : null;
}
