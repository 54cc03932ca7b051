import {
  type DriftResult,
  type Job,
  type JobStatus,
  NAME_RULE,
  type VineStatus,
  type WorkerStatus,
} from '@trellis/core';
import { type Html, html } from './html.js';

/** What the browser says (the `title` of a name field) when a name breaks `NAME_PATTERN`. */
export const NAME_HINT = `A name ${NAME_RULE}.`;

/** `2025-06-01 12:00:03 UTC`, the same for every reader whatever their time zone. */
export function utc(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** `42s`, `3m 05s`, `2h 10m`, `4d 3h`. */
export function duration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${String(seconds % 60).padStart(2, '0')}s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours}h ${minutes % 60}m`;
  return `${Math.floor(hours / 24)}d ${hours % 24}h`;
}

/** A time as `3m 05s ago`, with the exact UTC time on hover and for machines. */
export function when(iso: string | null, now: Date, never = 'never'): Html {
  if (iso === null) return html`<span class="muted">${never}</span>`;
  const ms = now.getTime() - Date.parse(iso);
  const text = Number.isNaN(ms) ? iso : ms < 5000 ? 'just now' : `${duration(ms)} ago`;
  return html`<time datetime="${iso}" title="${utc(iso)}">${text}</time>`;
}

/** How long a job ran (or has been running). */
export function jobDuration(job: Pick<Job, 'claimed_at' | 'finished_at'>, now: Date): string {
  if (job.claimed_at === null) return '';
  const end = job.finished_at === null ? now.getTime() : Date.parse(job.finished_at);
  return duration(end - Date.parse(job.claimed_at));
}

const TONES: Readonly<Record<JobStatus | VineStatus | WorkerStatus, string>> = {
  QUEUED: 'waiting',
  PROCESSING: 'running',
  SUCCESS: 'good',
  FAILED: 'bad',
  CANCELLED: 'neutral',
  NEW: 'neutral',
  PLANNING: 'running',
  PLANNED: 'good',
  DEPLOYING: 'running',
  DEPLOYED: 'good',
  DESTROYING: 'running',
  DESTROYED: 'neutral',
  ONLINE: 'good',
  BUSY: 'running',
  OFFLINE: 'bad',
};

/** A status as a coloured badge; the text always says it, colour only helps. */
export function badge(status: JobStatus | VineStatus | WorkerStatus, attributes?: Html): Html {
  return html`<span class="badge tone-${TONES[status] ?? 'neutral'}" data-status="${status}"${attributes ?? ''}>${status}</span>`;
}

const DRIFT_TONES = { in_sync: 'good', drifted: 'bad', unknown: 'neutral' } as const;
const DRIFT_LABELS = { in_sync: 'in sync', drifted: 'drifted', unknown: 'drift unknown' } as const;

/**
 * A vine's last drift check as a badge (issue 14): `in sync`, `drifted` with the plan's counts in
 * its title, or `drift unknown` with the check's error. Nothing for a vine never checked.
 */
export function driftBadge(drift: DriftResult | null): Html | '' {
  if (!drift) return '';
  const changes = drift.changes;
  const title =
    drift.status === 'unknown'
      ? (drift.error ?? 'the drift check failed')
      : changes
        ? `${changes.add} to add, ${changes.change} to change, ${changes.destroy} to destroy (checked ${drift.checked_at})`
        : `checked ${drift.checked_at}`;
  return html`<span class="badge tone-${DRIFT_TONES[drift.status]}" data-drift="${drift.status}" title="${title}">${DRIFT_LABELS[drift.status]}</span>`;
}

export function shortId(id: string): string {
  return id.slice(0, 8);
}

const JOB_TYPE_LABELS: Readonly<Record<Job['job_type'], string>> = {
  PLAN: 'Plan',
  DEPLOY: 'Deploy',
  DESTROY: 'Destroy',
  DESTROY_WORKER: 'Destroy worker',
};

export function jobTypeLabel(job: Pick<Job, 'job_type' | 'plan_job_id'> & { trigger?: Job['trigger'] }): string {
  if (job.job_type === 'DEPLOY' && job.plan_job_id !== null) return 'Deploy (saved plan)';
  if (job.trigger?.type === 'drift') return 'Drift check';
  if (job.trigger?.type === 'upstream') return `${JOB_TYPE_LABELS[job.job_type]} (after upstream deploy)`;
  if (job.trigger?.type === 'pull_request') return `Speculative plan (pull request #${job.trigger.number})`;
  if (job.trigger?.type === 'push') return `${JOB_TYPE_LABELS[job.job_type]} (push)`;
  if (job.trigger?.type === 'cli') return `${JOB_TYPE_LABELS[job.job_type]} (tofu CLI)`;
  return JOB_TYPE_LABELS[job.job_type];
}

const PROVIDER_LABELS = { github: 'GitHub', gitlab: 'GitLab', bitbucket: 'Bitbucket' } as const;

/** The commit a job's snapshot pins (a git-driven job), or null. */
export function pinnedCommit(job: {
  config_snapshot: { source: { type: string; commit?: string } | null };
}): string | null {
  const source = job.config_snapshot.source;
  return source?.type === 'git' && source.commit ? source.commit : null;
}

/** A commit as a short sha, the full one in its title; a dash when the job pins none. */
export function commitCell(job: { config_snapshot: { source: { type: string; commit?: string } | null } }): Html {
  const commit = pinnedCommit(job);
  return commit
    ? html`<code title="${commit}" data-commit>${commit.slice(0, 7)}</code>`
    : html`<span class="muted">—</span>`;
}

/** Why a job was queued, for the job page's facts. */
export function triggerText(base: string, trigger: Job['trigger']): Html {
  switch (trigger.type) {
    case 'manual':
      return html`manual`;
    case 'cli':
      return html`tofu CLI (remote run)`;
    case 'drift':
      return html`drift check`;
    case 'upstream':
      return html`after <a href="${base}/jobs/${trigger.job_id}">deploy ${shortId(trigger.job_id)}</a> of an upstream vine`;
    case 'push':
      return html`push to <code>${trigger.branch}</code> of ${trigger.repository} (${PROVIDER_LABELS[trigger.provider]})`;
    case 'pull_request':
      return html`pull request #${String(trigger.number)} of ${trigger.repository} (${PROVIDER_LABELS[trigger.provider]})`;
  }
}
