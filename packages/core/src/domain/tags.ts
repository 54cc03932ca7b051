import { ValidationError } from './errors.js';

/**
 * A configuration's tags: one rule for every way they are set (the Terraform Cloud protocol's
 * workspace tags, `POST`/`PATCH /api/cli/configurations`, the CLI and the web) and for the fleet's
 * `tag` filter. A tag is a letter or digit, then letters, digits, ':', '_', '.' or '-' (at most 255).
 */
export const TAG_PATTERN = /^[A-Za-z0-9][A-Za-z0-9:_.-]{0,254}$/;
export const MAX_TAGS = 100;
export const TAG_RULE = 'tags are letters, digits, ":", "_", "." and "-"';

/** Tags as a vine keeps them: unique, lower case (HCP Terraform compares them so), sorted. */
export function parseTags(value: unknown, path = 'tags'): string[] {
  if (!Array.isArray(value) || value.length > MAX_TAGS) {
    throw new ValidationError(`${path} must be a list of at most ${MAX_TAGS} tags`, [
      { path, message: `must be a list of at most ${MAX_TAGS} tags` },
    ]);
  }
  const tags = new Set<string>();
  for (const raw of value) {
    if (typeof raw !== 'string' || !TAG_PATTERN.test(raw)) {
      throw new ValidationError(`${path}: ${JSON.stringify(raw)} is not a tag`, [
        { path, message: `${JSON.stringify(raw)} is not a tag: ${TAG_RULE}, starting with a letter or digit` },
      ]);
    }
    tags.add(raw.toLowerCase());
  }
  return [...tags].sort();
}
