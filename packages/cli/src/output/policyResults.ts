import { type JobResults, policyResultsOf } from '@trellis/core';

interface Styles {
  bold(text: string): string;
  red(text: string): string;
  yellow(text: string): string;
  green(text: string): string;
}

/** `trellis jobs show`: each policy's result on a plan, with its messages (none: null). */
export function renderPolicyResults(metadata: Pick<JobResults, 'policy_results'>, style: Styles): string | null {
  const results = policyResultsOf(metadata);
  if (results.length === 0) return null;
  const lines = [style.bold('Policies:')];
  for (const result of results) {
    const verdict = result.passed
      ? style.green('passed')
      : result.enforcement === 'mandatory'
        ? style.red('FAILED')
        : style.yellow('warning');
    lines.push(`  ${verdict}  ${result.name} v${result.version} (${result.enforcement})`);
    for (const message of result.messages) lines.push(`          - ${message}`);
  }
  return lines.join('\n');
}
