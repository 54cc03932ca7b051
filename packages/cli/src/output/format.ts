import type { JobStatus, SourceSummary, VineSource, VineStatus, WorkerStatus } from '@trellis/core';
import type { JobView as Job } from '@trellis/client';
import type { Colours } from './Terminal.js';

/** "5s ago", "3m ago", "2h ago", "4d ago"; the absolute time is in `show` and `--json`. */
export function timeAgo(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '-';
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (Number.isNaN(seconds)) return iso;
  if (seconds < 60) return `${seconds}s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h ago`;
  return `${Math.floor(seconds / 86_400)}d ago`;
}

/** "850ms", "12s", "3m 4s", "1h 2m". */
export function duration(milliseconds: number): string {
  if (milliseconds < 1000) return `${Math.max(0, Math.round(milliseconds))}ms`;
  const seconds = Math.round(milliseconds / 1000);
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ${seconds % 60}s`;
  return `${Math.floor(seconds / 3600)}h ${Math.floor((seconds % 3600) / 60)}m`;
}

/** How long a job ran (or has been running), or `-` before it started. */
export function jobDuration(job: Pick<Job, 'claimed_at' | 'finished_at'>, now = Date.now()): string {
  if (!job.claimed_at) return '-';
  const end = job.finished_at ? Date.parse(job.finished_at) : now;
  return duration(end - Date.parse(job.claimed_at));
}

/** An absolute time as people read it: `2025-01-02 03:04:05 UTC`. */
export function timestamp(iso: string | null | undefined): string {
  if (!iso) return '-';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

type AnyStatus = JobStatus | VineStatus | WorkerStatus;

/** Statuses coloured by what they mean: green done, red failed, yellow waiting, cyan running. */
export function statusColour(colours: Colours, status: AnyStatus | string): string {
  switch (status) {
    case 'SUCCESS':
    case 'DEPLOYED':
    case 'PLANNED':
    case 'ONLINE':
      return colours.green(status);
    case 'FAILED':
    case 'OFFLINE':
      return colours.red(status);
    case 'QUEUED':
    case 'NEW':
    case 'CANCELLED':
    case 'DESTROYED':
      return colours.yellow(status);
    case 'PROCESSING':
    case 'PLANNING':
    case 'DEPLOYING':
    case 'DESTROYING':
    case 'BUSY':
      return colours.cyan(status);
    default:
      return status;
  }
}

/** `git https://…@main:infra/`, `inline (3 files)` or `upload <configuration version>:infra/`. */
export function describeSource(source: VineSource | SourceSummary | null | undefined): string {
  if (!source) return '-';
  if (source.type === 'inline') {
    const count = 'files' in source ? Object.keys(source.files).length : source.file_count;
    return `inline (${count} file${count === 1 ? '' : 's'})`;
  }
  if (source.type === 'upload') {
    return `upload ${source.configuration_version_id}${source.path ? `:${source.path}` : ''}`;
  }
  return `git ${source.url}${source.ref ? `@${source.ref}` : ''}${source.path ? `:${source.path}` : ''}`;
}

/** `PLAN`, `DEPLOY`… in lower case for sentences ("plan succeeded"). */
export function jobNoun(job: Pick<Job, 'job_type'>): string {
  switch (job.job_type) {
    case 'PLAN':
      return 'Plan';
    case 'DEPLOY':
      return 'Deploy';
    case 'DESTROY':
      return 'Destroy';
    case 'DESTROY_WORKER':
      return 'Worker destroy';
    default:
      return 'Job';
  }
}

/** The last drift check at a glance, for tables: `in sync`, `drifted`, `unknown`, or `-` (never checked). */
export function driftBadge(style: Colours, status: 'in_sync' | 'drifted' | 'unknown' | undefined): string {
  switch (status) {
    case 'in_sync':
      return style.green('in sync');
    case 'drifted':
      return style.red('drifted');
    case 'unknown':
      return style.yellow('unknown');
    default:
      return '-';
  }
}

/** Why a job was queued, in a word: manual, drift, upstream, push, `pr #7`. */
export function triggerLabel(job: Pick<Job, 'trigger'>): string {
  const { trigger } = job;
  return trigger.type === 'pull_request' ? `pr #${trigger.number}` : trigger.type;
}

/** The commit a job runs, as a short sha (a git-driven job pins it), or `-`. */
export function shortCommit(job: { config_snapshot: { source: SourceSummary | VineSource | null } | null }): string {
  const source = job.config_snapshot?.source;
  const commit = source?.type === 'git' ? source.commit : undefined;
  return commit ? commit.slice(0, 7) : '-';
}

/** The trigger as `jobs show` prints it, one line. */
export function triggerDescription(job: Pick<Job, 'trigger'>): string {
  const { trigger } = job;
  switch (trigger.type) {
    case 'manual':
      return 'manual';
    case 'cli':
      return 'tofu CLI (remote run)';
    case 'drift':
      return 'drift check';
    case 'upstream':
      return `upstream deploy ${trigger.job_id} of configuration ${trigger.vine_id}`;
    case 'push':
      return `push to ${trigger.branch} of ${trigger.repository} (${trigger.provider}) by ${trigger.author || 'unknown'}`;
    case 'pull_request':
      return `pull request #${trigger.number} of ${trigger.repository} (${trigger.provider}): ${trigger.head_branch} into ${trigger.base_branch}, by ${trigger.author || 'unknown'}`;
  }
}

/** `12.3 MiB`, for sizes people read. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}
