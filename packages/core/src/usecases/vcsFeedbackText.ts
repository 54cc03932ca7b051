import { type PlanSummary, planChanges } from '../domain/jobResults.js';
import { failedMandatoryPolicies, type PolicyResult, policyResultsOf } from '../domain/policies.js';
import type { Job } from '../domain/records.js';
import type { CommitState } from '../domain/vcs.js';

/**
 * What a git-driven job tells its provider, as text (issue 13): the commit status's state and
 * description, and a pull request PLAN's comment, from the job's typed results.
 */

/**
 * What happened to a git-driven job: `queued` (created), `ended` (SUCCESS, FAILED or CANCELLED),
 * or `lost` (its agent went silent; the job is FAILED without having reported).
 */
export type VcsFeedbackMoment = 'queued' | 'ended' | 'lost';

function verb(job: Pick<Job, 'job_type'>): string {
  switch (job.job_type) {
    case 'PLAN':
      return 'Plan';
    case 'DEPLOY':
      return 'Deploy';
    case 'DESTROY':
      return 'Destroy';
    default:
      return 'Job';
  }
}

function counts(summary: PlanSummary): string {
  return `+${summary.add} ~${summary.change} -${summary.destroy}`;
}

/** The commit state and description of a job at `moment`. */
export function statusOf(job: Job, moment: VcsFeedbackMoment): [CommitState, string] {
  const what = verb(job);
  if (moment === 'queued') return ['pending', `${what} queued`];
  if (moment === 'lost') return ['error', `${what} lost: its agent stopped answering`];
  if (job.status === 'CANCELLED') return ['error', `${what} cancelled`];
  if (job.status === 'FAILED') return ['failure', `${what} failed: ${job.error_message ?? 'see the job'}`];
  const summary = job.execution_metadata.plan_summary;
  const refused = failedMandatoryPolicies(job.execution_metadata);
  const text = summary ? `${what}: ${counts(summary)}` : `${what} succeeded`;
  if (refused.length > 0) {
    return [
      'failure',
      `${text}; mandatory polic${refused.length === 1 ? 'y' : 'ies'} failed: ${refused.map((r) => r.name).join(', ')}`,
    ];
  }
  return ['success', text];
}

const ACTION_SYMBOLS: [string, string][] = [
  ['delete,create', '-/+ replace'],
  ['create,delete', '+/- replace'],
  ['create', '+ create'],
  ['update', '~ update'],
  ['delete', '- destroy'],
  ['read', '<= read'],
];

function actionLabel(actions: string[]): string {
  const key = actions.join(',');
  return ACTION_SYMBOLS.find(([k]) => k === key)?.[1] ?? key;
}

/** Markdown inline code that survives backticks in the text. */
function code(text: string): string {
  return `\`${text.replaceAll('`', "'")}\``;
}

/** The marker that says which vine a comment is about (invisible in rendered Markdown). */
export function commentMarker(vineId: string): string {
  return `<!-- trellis:vine:${vineId} -->`;
}

/**
 * The vine's comment on a pull request after a PLAN: which vine, the result, the summary, the
 * resources that change, the policy results and the job's link (Markdown).
 */
export function renderPlanComment(input: {
  job: Job;
  vineName: string;
  vineyardName: string;
  url: string;
  sha: string;
  lost?: boolean;
}): string {
  const { job, url } = input;
  const metadata = job.execution_metadata;
  const lines = [
    commentMarker(job.vine_id ?? ''),
    `### Trellis plan: ${code(input.vineName)} in ${code(input.vineyardName)}`,
    '',
  ];
  const commit = `commit ${code(input.sha.slice(0, 12))}`;
  const summary = metadata.plan_summary;
  if (input.lost) {
    lines.push(`**Plan lost** on ${commit}: the agent running it stopped answering.`);
  } else if (job.status === 'FAILED') {
    lines.push(
      `**Plan failed** on ${commit}:`,
      '',
      '```',
      (job.error_message ?? 'see the job').replaceAll('```', "'''"),
      '```',
    );
  } else if (summary) {
    const none = planChanges(summary) === 0;
    lines.push(
      `**Plan succeeded** on ${commit}: ${code(counts(summary))} (${summary.add} to add, ${summary.change} to change, ${summary.destroy} to destroy)${none ? '. No changes.' : ''}`,
    );
  } else {
    lines.push(`**Plan succeeded** on ${commit}.`);
  }
  const changes = metadata.resource_changes ?? [];
  if (changes.length > 0) {
    lines.push('', '| Action | Resource |', '| --- | --- |');
    for (const change of changes) lines.push(`| ${actionLabel(change.actions)} | ${code(change.address)} |`);
    const omitted = metadata.resource_changes_omitted ?? 0;
    if (omitted > 0) lines.push('', `…and ${omitted} more (see the job).`);
  }
  const policies = policyResultsOf(metadata);
  if (policies.length > 0) {
    lines.push('', '**Policies**', '');
    for (const result of policies) lines.push(...policyLines(result));
  }
  lines.push('', `[Open the job in Trellis](${url})`);
  return lines.join('\n');
}

function policyLines(result: PolicyResult): string[] {
  const mark = result.passed ? '✅ passed' : result.enforcement === 'mandatory' ? '❌ failed' : '⚠️ failed (advisory)';
  return [
    `- ${mark}: ${code(result.name)} v${result.version} (${result.enforcement})`,
    ...result.messages.map((message) => `  - ${message.replaceAll('\n', ' ')}`),
  ];
}

/** `body` cut to `max` characters, ending with a note that it was cut and a link to the job. */
export function cutComment(body: string, max: number, url: string): string {
  if (body.length <= max) return body;
  const note = `\n\n---\n**This comment was cut to fit the provider's size limit.** [Open the job in Trellis](${url}) for the whole plan.`;
  const room = Math.max(0, max - note.length);
  let kept = body.slice(0, room);
  const lastLine = kept.lastIndexOf('\n');
  if (lastLine > 0) kept = kept.slice(0, lastLine);
  // An open code block would swallow the note.
  if ((kept.match(/```/g) ?? []).length % 2 === 1) kept = `${kept}\n\`\`\``.slice(0, room);
  return `${kept}${note}`.slice(0, max);
}

/** `text` on one line, at most `max` characters. */
export function cut(text: string, max: number): string {
  const flat = text.replaceAll(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}
