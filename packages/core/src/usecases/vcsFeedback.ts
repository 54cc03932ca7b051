import type { UserActor } from '../domain/actors.js';
import { PROVIDER_NAMES } from '../domain/enums.js';
import { requireUuid } from '../domain/validation.js';
import { Access } from './Access.js';
import { isDomainError } from '../domain/errors.js';
import type { Job } from '../domain/records.js';
import type { CommitState, VcsJobTrigger } from '../domain/vcs.js';
import {
  type VcsFeedbackAttempt,
  type VcsFeedbackItem,
  type VcsFeedbackOutcome,
  type VcsFeedbackPayload,
  vcsFeedbackSubject,
} from '../domain/vcsFeedback.js';
import type { Clock } from '../ports/Clock.js';
import type { Random } from '../ports/Random.js';
import { ownerScope, type Stores, systemScope } from '../ports/UnitOfWork.js';
import { deliverDueRows, finalOutcome, type OutboxDeliverer, retryOutcome } from '../outbox/delivery.js';
import type { CoreDeps, CoreSettings } from './CoreDeps.js';
import { jobWebUrl } from './notificationOutbox.js';
import { vcsTokenFor } from './vcsTokens.js';
import { cut, cutComment, renderPlanComment, statusOf, type VcsFeedbackMoment } from './vcsFeedbackText.js';

export interface VcsFeedbackDeps {
  clock: Clock;
  random: Random;
  /** `notifications.webUrl`: the job's link. */
  settings: Pick<CoreSettings, 'notifications'>;
}

/** A commit status description: GitHub keeps 140 characters. */
const MAX_DESCRIPTION = 140;

/** The git trigger of a job, when it has one. */
export function vcsTriggerOf(job: Pick<Job, 'trigger'>): VcsJobTrigger | null {
  const trigger = job.trigger;
  return trigger?.type === 'push' || trigger?.type === 'pull_request' ? trigger : null;
}

/**
 * Records, in the caller's unit of work, the feedback a git-driven job's `moment` owes the
 * provider: its commit status (pending when queued; success, failure or error when it ends), and
 * for the PLAN of a pull request that ended (not cancelled) the vine's comment on it. Nothing for
 * other jobs. Returns the items written.
 */
export async function enqueueVcsFeedback(
  stores: Stores,
  deps: VcsFeedbackDeps,
  job: Job,
  moment: VcsFeedbackMoment,
): Promise<VcsFeedbackItem[]> {
  const trigger = vcsTriggerOf(job);
  if (trigger === null || job.vine_id === null) return [];
  if (moment === 'ended' && !['SUCCESS', 'FAILED', 'CANCELLED'].includes(job.status)) return [];
  const vine = await stores.vines.get(job.owner_id, job.vine_id);
  const vineyard = job.vineyard_id === null ? null : await stores.vineyards.get(job.owner_id, job.vineyard_id);
  const vineName = vine?.name ?? job.config_snapshot.vine?.name ?? job.vine_id;
  const vineyardName = vineyard?.name ?? job.vineyard_id ?? 'vineyard';
  const url = jobWebUrl(deps.settings.notifications.webUrl, job.id);
  const repository = trigger.repository;
  const sha = trigger.type === 'push' ? trigger.commit_sha : trigger.head_sha;
  const [state, description] = statusOf(job, moment);
  const payloads: VcsFeedbackPayload[] = [
    {
      kind: 'status',
      repository,
      sha,
      status: {
        state,
        context: `trellis/${vineyardName}/${vineName}`,
        description: cut(description, MAX_DESCRIPTION),
        target_url: url,
      },
    },
  ];
  if (trigger.type === 'pull_request' && job.job_type === 'PLAN' && moment !== 'queued' && job.status !== 'CANCELLED') {
    payloads.push({
      kind: 'comment',
      repository,
      number: trigger.number,
      body: renderPlanComment({ job, vineName, vineyardName, url, lost: moment === 'lost', sha }),
      job_url: url,
    });
  }
  const now = deps.clock.now().toISOString();
  const written: VcsFeedbackItem[] = [];
  for (const payload of payloads) {
    written.push(
      await stores.outbox.add('vcs_feedback', {
        id: deps.random.uuid(),
        owner_id: job.owner_id,
        job_id: job.id,
        vine_id: job.vine_id,
        provider: trigger.provider,
        kind: payload.kind,
        subject: vcsFeedbackSubject(payload),
        payload,
        status: 'pending',
        attempts: [],
        created_at: now,
        next_attempt_at: now,
        finished_at: null,
      }),
    );
  }
  return written;
}

/** What one attempt did, for the server's log (never a token). */
export interface VcsFeedbackReport {
  id: string;
  owner_id: string;
  job_id: string;
  provider: string;
  kind: string;
  status: VcsFeedbackItem['status'];
  attempts: number;
  error: string | null;
}

/**
 * The deliverer of the outbox's `vcs_feedback` rows (issue 13): sends each with the connecting
 * user's token. A provider that refuses or is down is retried with the outbox's backoff, at most
 * `outbox.vcsFeedbackMaxAttempts` times and within its retry window; the job is never touched.
 */
export class VcsFeedbackUseCases implements OutboxDeliverer<'vcs_feedback'> {
  private readonly access: Access;

  constructor(private readonly deps: CoreDeps) {
    this.access = new Access(deps);
  }

  /**
   * `GET /api/cli/jobs/{id}/vcs-feedback`: whether the job's commit status and pull request
   * comment reached the provider, oldest first (empty for a job no push or pull request queued).
   */
  async forJob(user: UserActor, id: unknown): Promise<VcsFeedbackView[]> {
    const jobId = requireUuid(id, 'id');
    const { record, scope } = await this.access.locate(user, 'read', 'job_not_found', (stores, ownerId) =>
      stores.jobs.get(ownerId, jobId),
    );
    const items = await this.deps.uow.read(scope, (stores) =>
      stores.outbox.listVcsFeedback(record.owner_id, record.id),
    );
    return items.map(vcsFeedbackView);
  }

  /**
   * A round of the outbox over feedback only (the scheduled task sends every kind): takes due
   * items (never one another replica holds) and tries each.
   */
  async deliverDue(): Promise<VcsFeedbackReport[]> {
    const delivered = await deliverDueRows(this.deps, { vcs_feedback: this }, ['vcs_feedback']);
    return delivered.flatMap((row) =>
      row.kind === 'vcs_feedback' && row.recorded !== null ? [reportVcsFeedback(row.recorded)] : [],
    );
  }

  /** One try at a claimed item, recorded with what follows from it. */
  async deliver(item: VcsFeedbackItem): Promise<VcsFeedbackItem | null> {
    const scope = ownerScope(item.owner_id);
    const { superseded, connection } = await this.deps.uow.read(scope, async (stores) => ({
      superseded: await stores.outbox.hasNewerVcsFeedback(item),
      connection: await stores.vcs.get(item.owner_id, item.vine_id),
    }));
    const at = this.deps.clock.now().toISOString();
    if (superseded) {
      return this.record(item, null, finalOutcome(at, 'superseded'));
    }
    const name = PROVIDER_NAMES[item.provider];
    const api = this.deps.vcs[item.provider]?.api;
    if (!connection || connection.provider !== item.provider) {
      const error = 'the vine is no longer connected to this repository';
      return this.record(item, { at, error }, finalOutcome(at, 'failed'));
    }
    let token: string | null = null;
    let error: string | null = null;
    try {
      if (!api) throw new Error(`${name} is not configured on this server`);
      // System work: the connecting user's identities (and a renewed token) are theirs, not the owner's.
      token = await this.deps.uow.run(systemScope, (stores) => vcsTokenFor(stores, this.deps, connection));
      await this.send(item, api, token);
    } catch (cause) {
      error = describe(cause, token);
      // A departed person's token is never used (issue 23): nothing to retry until an admin reconnects.
      if (isDomainError(cause) && cause.code === 'needs_reconnect') {
        return this.record(item, { at, error }, finalOutcome(at, 'failed'));
      }
    }
    if (error === null) return this.record(item, { at, error: null }, finalOutcome(at, 'delivered'));
    const tries = item.attempts.length + 1;
    return this.record(
      item,
      { at, error },
      retryOutcome(this.deps, item.created_at, tries, this.deps.settings.outbox.vcsFeedbackMaxAttempts),
    );
  }

  private async send(
    item: VcsFeedbackItem,
    api: NonNullable<CoreDeps['vcs'][keyof CoreDeps['vcs']]>['api'],
    token: string,
  ): Promise<void> {
    const payload = item.payload;
    if (payload.kind === 'status') {
      await api.setCommitStatus(token, payload.repository, payload.sha, payload.status);
      return;
    }
    const scope = ownerScope(item.owner_id);
    const existing = await this.deps.uow.read(scope, (stores) =>
      stores.vcsFeedback.getComment(item.owner_id, item.vine_id, item.provider, payload.repository, payload.number),
    );
    const body = cutComment(payload.body, api.maxCommentLength, payload.job_url);
    const written = await api.upsertPullRequestComment(token, payload.repository, payload.number, {
      comment_id: existing?.comment_id ?? null,
      body,
    });
    if (written.comment_id !== existing?.comment_id) {
      await this.deps.uow.run(scope, (stores) =>
        stores.vcsFeedback.putComment({
          owner_id: item.owner_id,
          vine_id: item.vine_id,
          provider: item.provider,
          repository: payload.repository,
          number: payload.number,
          comment_id: written.comment_id,
          updated_at: this.deps.clock.now().toISOString(),
        }),
      );
    }
  }

  private record(
    item: VcsFeedbackItem,
    attempt: VcsFeedbackAttempt | null,
    outcome: VcsFeedbackOutcome,
  ): Promise<VcsFeedbackItem | null> {
    return this.deps.uow.run(ownerScope(item.owner_id), (stores) =>
      stores.outbox.recordAttempt('vcs_feedback', item.owner_id, item.id, attempt, outcome),
    );
  }
}

/** Why an attempt failed, as stored and logged: the error's message with the token blanked out. */
function describe(cause: unknown, token: string | null): string {
  const code = isDomainError(cause) ? `${cause.code}: ` : '';
  const message = cause instanceof Error ? cause.message : String(cause);
  const text = `${code}${message}`;
  const clean = token && token.length > 0 ? text.split(token).join('***') : text;
  return clean.length > 500 ? `${clean.slice(0, 499)}…` : clean;
}

/** What an attempt at `item` came to, for the log. */
export function reportVcsFeedback(item: VcsFeedbackItem): VcsFeedbackReport {
  const last = item.attempts[item.attempts.length - 1];
  return {
    id: item.id,
    owner_id: item.owner_id,
    job_id: item.job_id,
    provider: item.provider,
    kind: item.kind,
    status: item.status,
    attempts: item.attempts.length,
    error: last?.error ?? null,
  };
}

/** What the job's view shows of its feedback at the provider. */
export interface VcsFeedbackView {
  kind: VcsFeedbackItem['kind'];
  provider: VcsFeedbackItem['provider'];
  status: VcsFeedbackItem['status'];
  /** The status's state (`pending`, `success`, ...); null for a comment. */
  state: CommitState | null;
  attempts: number;
  last_error: string | null;
  next_attempt_at: string | null;
}

export function vcsFeedbackView(item: VcsFeedbackItem): VcsFeedbackView {
  const last = item.attempts[item.attempts.length - 1];
  return {
    kind: item.kind,
    provider: item.provider,
    status: item.status,
    state: item.payload.kind === 'status' ? item.payload.status.state : null,
    attempts: item.attempts.length,
    last_error: last?.error ?? null,
    next_attempt_at: item.status === 'pending' ? item.next_attempt_at : null,
  };
}

/**
 * One line per kind of feedback, of its latest item, for people (`trellis jobs show`, the web job
 * page): `GitHub status (success): delivered`, `GitHub comment: retrying after 2 attempts: ...`.
 */
export function describeVcsFeedback(items: readonly VcsFeedbackView[]): { label: string; text: string; ok: boolean }[] {
  const latest = new Map<string, VcsFeedbackView>();
  for (const item of items) if (item.status !== 'superseded') latest.set(item.kind, item);
  return [...latest.values()].map((item) => {
    const name = PROVIDER_NAMES[item.provider];
    const label = item.kind === 'status' ? `${name} status${item.state ? ` (${item.state})` : ''}` : `${name} comment`;
    const tries = `${item.attempts} attempt${item.attempts === 1 ? '' : 's'}`;
    switch (item.status) {
      case 'delivered':
        return { label, text: 'delivered', ok: true };
      case 'failed':
        return {
          label,
          text: `not delivered, gave up after ${tries}: ${item.last_error ?? 'unknown error'}`,
          ok: false,
        };
      default:
        return item.attempts === 0
          ? { label, text: 'sending', ok: true }
          : { label, text: `retrying after ${tries}: ${item.last_error ?? 'unknown error'}`, ok: false };
    }
  });
}
