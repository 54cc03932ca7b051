import type { JobView } from '@trellis/client';
import type { RunOptions } from '@trellis/core';
import { Command, Option } from 'clipanion';
import { describeSource, jobDuration, statusColour, timestamp, triggerDescription } from '../../output/format.js';
import { renderPolicyResults } from '../../output/policyResults.js';
import { renderResourceChanges, renderVcsFeedback } from '../../output/vcsFeedback.js';
import { renderFields } from '../../output/table.js';
import { TrellisCommand } from '../TrellisCommand.js';
import { checkJobId } from './jobId.js';
import { describeApproval, describeOverride } from '../plans/planReview.js';
import { vineyardName } from '../../output/vineyards.js';

/** The pinned commit in full, with the push's message (first line) when the trigger carries it. */
function commitLine(job: JobView): string | null {
  const source = job.config_snapshot.source;
  const commit = source?.type === 'git' ? source.commit : undefined;
  if (!commit) return null;
  const message = job.trigger.type === 'push' ? job.trigger.commit_message.split('\n')[0] : '';
  return message ? `${commit} ${message}` : commit;
}

export class ShowJobCommand extends TrellisCommand {
  static override paths = [['jobs', 'show']];

  static override usage = Command.Usage({
    category: 'Jobs',
    description: 'Show a job: status, configuration, agent, timing and results',
    examples: [['Show a job', '$0 jobs show 9d7e4c1a-5b2f-4e8a-a1c3-2f6b8d9e0a1b']],
  });

  id = Option.String({ name: 'id' });

  override async execute(): Promise<number> {
    const id = checkJobId(this.id);
    const client = this.signedInClient();
    const job = await client.getJob(id);
    const trigger = (job as { trigger?: { type?: string } }).trigger?.type;
    // A job a push or a pull request queued: did its status (and comment) reach the provider?
    const feedback = trigger === 'push' || trigger === 'pull_request' ? await client.getJobVcsFeedback(id) : null;
    const terminal = this.terminal;
    if (this.json) {
      terminal.printJson(feedback === null ? job : { ...job, vcs_feedback: feedback });
      return 0;
    }
    const { out } = terminal;
    const snapshot = job.config_snapshot;
    const metadata = Object.entries(job.execution_metadata ?? {})
      .filter(([key]) => !['policy_results', 'resource_changes', 'resource_changes_omitted'].includes(key))
      .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
    terminal.print(
      renderFields(
        [
          ['ID', job.id],
          ['Type', job.job_type],
          ['Status', statusColour(out, job.status)],
          ['Error', job.error_message],
          ['Queue position', job.queue_position === null ? null : `${job.queue_position} (trellis queue)`],
          ['Waiting', job.waiting_for ? job.waiting_for.message : null],
          ['Config', snapshot?.vine ? `${snapshot.vine.name} (${snapshot.vine.id})` : null],
          ['Trigger', triggerDescription(job)],
          ['Speculative', job.speculative ? 'yes (never deployed)' : 'no'],
          ['Commit', commitLine(job)],
          [
            'Pull request',
            job.trigger.type === 'pull_request'
              ? `#${job.trigger.number} ${job.trigger.title} ${job.trigger.url}`
              : null,
          ],
          ['Vineyard', await vineyardName(client, job.vineyard_id)],
          ['Plan job', job.plan_job_id],
          ['Destroy plan', job.job_type === 'PLAN' && snapshot?.destroy === true ? 'yes' : null],
          ['Source', snapshot?.source?.type === 'upload' ? describeSource(snapshot.source) : null],
          ['Run options', runOptionFlags(snapshot?.run_options)],
          ['Deployable', describeApply(job)],
          ['Approval', describeApproval(job)],
          ['Override', describeOverride(job)],
          ['Target worker', job.target_worker_id],
          ['Agent', job.claimed_by_worker_id],
          ['Created', timestamp(job.created_at)],
          ['Started', timestamp(job.claimed_at)],
          ['Finished', timestamp(job.finished_at)],
          ['Duration', jobDuration(job)],
          ['Config hash', job.config_hash],
          ['Metadata', metadata.join(', ')],
        ],
        out.bold,
      ),
    );
    const changes = renderResourceChanges(job.execution_metadata ?? {}, out);
    if (changes !== null) terminal.print(changes);
    const policies = renderPolicyResults(job.execution_metadata ?? {}, out);
    if (policies !== null) terminal.print(policies);
    if (feedback !== null) terminal.print(renderVcsFeedback(feedback, out));
    return 0;
  }
}

/**
 * Whether the plan may be applied, by the deploy gate's rule (`actions.apply` of the job, issue
 * 23): the command that applies it, or why not. Null for a job that is not a plan of a vine.
 */
function describeApply(job: JobView): string | null {
  const apply = job.actions?.apply;
  if (!apply) return null;
  const name = job.config_snapshot?.vine?.name ?? 'CONFIG';
  const command = job.config_snapshot?.destroy === true ? 'destroy' : 'deploy';
  return apply.allowed
    ? `yes: trellis ${command} ${name} --plan ${job.id}`
    : `no: ${apply.reason ?? 'refused'} [${apply.code ?? 'refused'}]`;
}

/** A plan's run options as the engine's flags (issue 27), or null without any. */
function runOptionFlags(options: RunOptions | undefined): string | null {
  if (!options) return null;
  const flags = [
    ...(options.target ?? []).map((address) => `-target=${address}`),
    ...(options.replace ?? []).map((address) => `-replace=${address}`),
    ...(options.refresh_only ? ['-refresh-only'] : []),
    ...(options.refresh === false ? ['-refresh=false'] : []),
  ];
  return flags.length > 0 ? flags.join(' ') : null;
}
