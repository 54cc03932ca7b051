import { describeVcsFeedback, type JobResults, type VcsFeedbackView } from '@trellis/core';

interface Styles {
  bold(text: string): string;
  red(text: string): string;
  green(text: string): string;
}

/** `trellis jobs show`: the resources a plan changes (none reported: null). */
export function renderResourceChanges(
  metadata: Pick<JobResults, 'resource_changes' | 'resource_changes_omitted'>,
  style: Pick<Styles, 'bold'>,
): string | null {
  const changes = metadata.resource_changes ?? [];
  if (changes.length === 0) return null;
  const lines = [style.bold('Changes:')];
  for (const { address, actions } of changes) lines.push(`  ${actions.join('/').padEnd(14)} ${address}`);
  const omitted = metadata.resource_changes_omitted ?? 0;
  if (omitted > 0) lines.push(`  ...and ${omitted} more`);
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
