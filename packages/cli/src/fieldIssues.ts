import type { TrellisApiError } from '@trellis/client';

type FieldIssue = TrellisApiError['errors'][number];

/** Where a field of the request came from: `body.`, `query.` or `path.`, which a person never typed. */
const WHERE = /^(?:body|query|path)\./;

/**
 * The problem's detail with each field it names said as the person typed it (the command's flag),
 * and the field issues it does not already name after it, each once.
 */
export function describeFields(
  error: TrellisApiError,
  flagFor: ((field: string) => string | undefined) | undefined,
): string {
  let detail = error.detail;
  const named = new Set<FieldIssue>();
  const labelOf = (issue: FieldIssue) => {
    const field = issue.path.replace(WHERE, '');
    return { field, label: (field && flagFor?.(field)) || field || issue.path };
  };
  // Longest paths first, so `source.url` is replaced before a shorter path inside it.
  for (const issue of [...error.errors].sort((a, b) => b.path.length - a.path.length)) {
    const { field, label } = labelOf(issue);
    if (field === '') continue;
    const pattern = new RegExp(`(?<![\\w.-])(?:${escapeRegExp(issue.path)}|${escapeRegExp(field)})(?![\\w.-])`, 'g');
    if (!pattern.test(detail)) continue;
    detail = detail.replace(pattern, label);
    named.add(issue);
  }
  const extra = error.errors
    .filter((issue) => !named.has(issue))
    .map((issue) => `${labelOf(issue).label} ${issue.message}`);
  const unnamed = [...new Set(extra)].filter((line) => !detail.includes(line));
  return unnamed.length > 0 ? `${detail} (${unnamed.join('; ')})` : detail;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
