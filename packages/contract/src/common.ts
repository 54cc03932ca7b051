/**
 * Shapes every resource area shares: identifiers, times, names and the page query of lists.
 * Formats and limits come from core's constants, so the OpenAPI document is as strict as core.
 */
import { type Json, NAME_PATTERN } from '@trellis/core';
import { z } from 'zod';

export const uuid = z.uuid();
export const isoTime = z.string().describe('ISO-8601 UTC time');
/**
 * Any JSON value (metadata, outputs): whatever JSON.parse gives is one, so nothing is checked,
 * and the OpenAPI document says "any" rather than spelling out JSON's recursive union.
 */
export const jsonValue = z.custom<Json>((value) => value !== undefined);
export const jsonObject = z.record(z.string(), jsonValue);

/**
 * A rule core checks itself, documented here. Core validates each field of a body and reports
 * every failing one at once; checking the same rule here too would answer with only the fields
 * zod knows, so the pattern goes into the OpenAPI document and core stays the one judge.
 */
export function checkedByCore(schema: z.ZodString, pattern: RegExp, description: string): z.ZodString {
  return schema.meta({ pattern: pattern.source, description });
}

/** Names of vineyards, vines, projects and workers, as core's `requireName` accepts them. */
export const recordName = checkedByCore(
  z.string(),
  NAME_PATTERN,
  "1 to 100 letters, digits, '.', '_' or '-', starting with a letter or digit",
);

export const IdParams = z.object({ id: z.uuid() });
export const NameParams = z.object({ name: z.string().min(1).max(200) });
export const ProjectNameParams = z.object({ project_name: z.string().min(1).max(200) });

/** `limit` and `cursor` of every list endpoint; core checks the bounds and reads the cursor. */
export const PageQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .optional()
    .describe('items per page: 1 to 200, default 50 (TRELLIS_PAGE_LIMIT_MAX and TRELLIS_PAGE_LIMIT_DEFAULT)'),
  cursor: z
    .string()
    .optional()
    .describe('opaque; take it from the `Link: <…>; rel="next"` header of the previous page'),
});
