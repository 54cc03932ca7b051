import { describeVcsFeedback, type JsonObject, type VcsFeedbackView } from '@trellis/core';

interface Styles {
  bold(text: string): string;
  red(text: string): string;
  green(text: string): string;
}

/** `trellis jobs show`: the resources a plan changes (none reported: null). */
export function renderResourceChanges(metadata: JsonObject, style: Pick<Styles, 'bold'>): string | null {
  const changes = metadata.resource_changes;
  if (!Array.isArray(changes) || changes.length === 0) return null;
  const lines = [style.bold('Changes:')];
  for (const change of changes) {
    if (typeof change !== 'object' || change === null || Array.isArray(change)) continue;
    const { address, actions } = change as { address?: unknown; actions?: unknown };
    if (typeof address !== 'string' || !Array.isArray(actions)) continue;
    lines.push(`  ${actions.join('/').padEnd(14)} ${address}`);
  }
  const omitted = metadata.resource_changes_omitted;
  if (typeof omitted === 'number' && omitted > 0) lines.push(`  ...and ${omitted} more`);
  return lines.join('\n');
}

/** `trellis jobs show`: whether the commit status and pull request comment reached the git provider. */
export function renderVcsFeedback(items: readonly VcsFeedbackView[], style: Styles): string {
  const lines = [style.bold('Git provider:')];
  const described = describeVcsFeedback(items);
  if (described.length === 0) lines.push('  nothing to send');
  for (const { label, text, ok } of described) lines.push(`  ${label}: ${ok ? style.green(text) : style.red(text)}`);
  return lines.join('\n');
}
