import type { z } from 'zod';

type Issue = z.core.$ZodRawIssue;

const KINDS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list',
  record: 'an object',
  bigint: 'a number',
  date: 'a date',
};

const FORMATS: Record<string, string> = {
  uuid: 'a UUID',
  guid: 'a UUID',
  email: 'an email address',
  url: 'a URL',
  datetime: 'an ISO-8601 time',
  date: 'a date (YYYY-MM-DD)',
  base64: 'base64',
  base64url: 'base64url',
};

function count(n: number | bigint, one: string): string {
  return `${n} ${Number(n) === 1 ? one : `${one}s`}`;
}

/**
 * What a person reads for a zod issue the contract gave no message of its own: "must be at
 * least 60", "is required", never a regular expression or zod's wording (issue 25). Passed to
 * `safeParse` as its error map, so a schema's own message (`min(60, { error: … })`) still wins.
 */
export function humanIssueMessage(issue: Issue): string | undefined {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'is required';
      return `must be ${KINDS[String(issue.expected)] ?? String(issue.expected)}`;
    case 'too_small': {
      const n = issue.minimum as number | bigint;
      if (issue.origin === 'string')
        return Number(n) === 1 ? 'must not be empty' : `must be at least ${count(n, 'character')}`;
      if (issue.origin === 'array' || issue.origin === 'set') return `must have at least ${count(n, 'item')}`;
      return issue.inclusive === false ? `must be more than ${n}` : `must be at least ${n}`;
    }
    case 'too_big': {
      const n = issue.maximum as number | bigint;
      if (issue.origin === 'string') return `must be at most ${count(n, 'character')}`;
      if (issue.origin === 'array' || issue.origin === 'set') return `must have at most ${count(n, 'item')}`;
      return issue.inclusive === false ? `must be less than ${n}` : `must be at most ${n}`;
    }
    case 'invalid_format': {
      const format = String(issue.format);
      if (format === 'regex') return 'is not in the expected form';
      if (format === 'starts_with' || format === 'ends_with' || format === 'includes')
        return 'is not in the expected form';
      return `must be ${FORMATS[format] ?? format}`;
    }
    case 'invalid_value': {
      const values = (issue.values as unknown[]).map((value) => String(value));
      return values.length === 1 ? `must be ${values[0]}` : `must be one of ${values.join(', ')}`;
    }
    case 'unrecognized_keys': {
      const keys = issue.keys as string[];
      return `${keys.length === 1 ? 'has an unknown field' : 'has unknown fields'}: ${keys.join(', ')}`;
    }
    case 'not_multiple_of':
      return `must be a multiple of ${String(issue.divisor)}`;
    case 'invalid_union':
    case 'invalid_key':
    case 'invalid_element':
    case 'custom':
      return 'is not valid';
    default:
      return undefined;
  }
}
