/**
 * Feedback at the git provider (issue 13): the commit statuses and pull request comments Trellis
 * sends about git-driven jobs. Each is a `vcs_feedback` row of the outbox (`outbox.ts`) written in
 * the same unit of work as the job change it reports, then sent (with the connecting user's token)
 * and retried by the outbox's delivery task. A provider that refuses or is down never fails the job.
 */
import type { GitProvider } from './enums.js';
import type { OutboxOutcome } from './outbox.js';
import type { CommitStatus } from './vcs.js';

export const VCS_FEEDBACK_KINDS = ['status', 'comment'] as const;
export type VcsFeedbackKind = (typeof VCS_FEEDBACK_KINDS)[number];

/**
 * `superseded`: a newer item about the same thing (the same commit's status, the same pull
 * request's comment) was written before this one was sent, so sending it would only undo it.
 */
export const VCS_FEEDBACK_STATUSES = ['pending', 'delivered', 'failed', 'superseded'] as const;
export type VcsFeedbackStatus = (typeof VCS_FEEDBACK_STATUSES)[number];

/** What to send: a commit status, or the body of the vine's comment on a pull request. */
export type VcsFeedbackPayload =
  | { kind: 'status'; repository: string; sha: string; status: CommitStatus }
  | { kind: 'comment'; repository: string; number: number; body: string; job_url: string };

/** One try at sending an item. */
export interface VcsFeedbackAttempt {
  at: string;
  /** Null when it reached the provider; else why not (a provider's message, never a token). */
  error: string | null;
}

export interface VcsFeedbackItem {
  id: string;
  /** The job's owner. */
  owner_id: string;
  job_id: string;
  vine_id: string;
  provider: GitProvider;
  kind: VcsFeedbackKind;
  /**
   * What the item is about: `status:<repository>:<sha>` or `comment:<repository>#<number>`. A
   * newer item of the same vine and subject supersedes an older one not yet sent.
   */
  subject: string;
  payload: VcsFeedbackPayload;
  status: VcsFeedbackStatus;
  attempts: VcsFeedbackAttempt[];
  created_at: string;
  /** When the worker may next try it (while `pending`; a claim moves it to the lease's end). */
  next_attempt_at: string;
  finished_at: string | null;
}

/** Where the vine's comment on one pull request is: every new plan edits it. */
export interface VcsCommentRef {
  owner_id: string;
  vine_id: string;
  provider: GitProvider;
  repository: string;
  number: number;
  comment_id: string;
  updated_at: string;
}

/** How an item stands after an attempt. */
export type VcsFeedbackOutcome = OutboxOutcome<'vcs_feedback'>;

export function vcsFeedbackSubject(payload: VcsFeedbackPayload): string {
  return payload.kind === 'status'
    ? `status:${payload.repository}:${payload.sha}`
    : `comment:${payload.repository}#${payload.number}`;
}
