import type { GitProvider } from '../domain/enums.js';
import { globMatcher } from '../domain/globs.js';
import { isDomainError, UnauthorizedError, ValidationError } from '../domain/errors.js';
import type { Job, JobTrigger } from '../domain/records.js';
import { isFullCommitSha, type VcsConnection, type VcsDelivery, type VcsEvent } from '../domain/vcs.js';
import { transitionJob } from '../domain/jobStateMachine.js';
import type { WebhookRequestParts } from '../ports/VcsApi.js';
import { type Stores, systemScope } from '../ports/UnitOfWork.js';
import { recordAudit } from './audit.js';
import { announce, type CoreDeps, isoNow, type VcsPort } from './CoreDeps.js';
import { cancelQueuedDriftChecks } from './DriftUseCases.js';
import { enqueueVcsFeedback } from './vcsFeedback.js';
import { createGitJob } from './gitJobs.js';
import { openWebhookSecret, vcsTokenFor } from './vcsTokens.js';

type PushEvent = Extract<VcsEvent, { kind: 'push' }>;
type PullRequestEvent = Extract<VcsEvent, { kind: 'pull_request' }>;

/** A job queued for a delivery, and the queued jobs that gave way to it. */
interface Queued {
  job: Job;
  cancelled: Job[];
}

/** What a webhook delivery did: the jobs it queued (none for a ping, an ignored event or a redelivery). */
export interface WebhookOutcome {
  jobs: Job[];
}

/**
 * Webhooks to jobs (issue 13). A delivery is parsed only far enough to find the repository it
 * claims to be about; nothing is done until it verifies with the secret of a connection of that
 * repository. Different owners may connect the same repository, each with its own secret: only
 * the connections whose secret verifies act. A delivery id acts once per connection (a provider's
 * redelivery repeats it).
 *
 * - A push to a connection's branch that touches its `paths` queues a PLAN of that exact commit.
 * - A pull request into the branch queues a speculative PLAN of its head commit and cancels the
 *   older queued plans of the same pull request.
 */
export class GitEventUseCases {
  constructor(private readonly deps: CoreDeps) {}

  /** `POST /api/webhooks/{provider}`. Throws `401 webhook_signature_invalid` when no connection verifies. */
  async receive(provider: GitProvider, request: WebhookRequestParts): Promise<WebhookOutcome> {
    const ports = this.deps.vcs[provider];
    // A provider this server is not configured for can have no connection: as for an unknown repository.
    if (!ports) return { jobs: [] };
    const delivery = ports.webhooks.parse(request);
    if (delivery === null) {
      throw new ValidationError(`this is not a ${provider} webhook delivery (no event header)`, [
        { path: 'headers', message: `missing the ${provider} event header` },
      ]);
    }
    const { event } = delivery;
    if (event.kind === 'ping' || event.kind === 'other') return { jobs: [] };
    const connections = await this.deps.uow.read(systemScope, (stores) =>
      stores.vcs.listForRepository(provider, event.repository),
    );
    if (connections.length === 0) return { jobs: [] };
    const verified: VcsConnection[] = [];
    for (const connection of connections) {
      const secret = await openWebhookSecret(this.deps.secrets, connection).catch(() => null);
      if (secret !== null && ports.webhooks.verify(request, secret)) verified.push(connection);
    }
    if (verified.length === 0) {
      throw new UnauthorizedError(
        'webhook_signature_invalid',
        'the delivery is not signed with the webhook secret of this repository',
      );
    }
    const jobs: Job[] = [];
    const cancelled: Job[] = [];
    for (const connection of verified) {
      const queued =
        event.kind === 'push'
          ? await this.onPush(ports, delivery, event, connection)
          : await this.onPullRequest(ports, delivery, event, connection);
      if (queued) {
        jobs.push(queued.job);
        cancelled.push(...queued.cancelled);
      }
    }
    // Announced after commit: the jobs that gave way to the new ones, then the new ones.
    for (const job of cancelled) {
      await announce(this.deps.events, {
        type: 'job_status_changed',
        owner_id: job.owner_id,
        job_id: job.id,
        status: job.status,
      });
    }
    for (const job of jobs) {
      await announce(this.deps.events, { type: 'job_queued', owner_id: job.owner_id, job_id: job.id });
    }
    return { jobs };
  }

  private async onPush(
    ports: VcsPort,
    delivery: VcsDelivery,
    event: PushEvent,
    connection: VcsConnection,
  ): Promise<Queued | null> {
    if (event.deleted || event.branch === null || event.branch !== connection.branch) {
      return this.recordOnly(delivery, connection);
    }
    const files = await this.changedFiles(ports, event, connection);
    if (!touchesPaths(files, connection.paths)) return this.recordOnly(delivery, connection);
    const trigger: JobTrigger = {
      type: 'push',
      provider: delivery.provider,
      repository: connection.repository,
      branch: event.branch,
      commit_sha: event.commit_sha,
      commit_message: event.commit_message,
      author: event.author,
    };
    return this.queuePlan(delivery, connection, trigger, event.commit_sha, async () => []);
  }

  private async onPullRequest(
    ports: VcsPort,
    delivery: VcsDelivery,
    event: PullRequestEvent,
    connection: VcsConnection,
  ): Promise<Queued | null> {
    if (!connection.pull_requests || event.base_branch !== connection.branch) {
      return this.recordOnly(delivery, connection);
    }
    // Bitbucket names a pull request's head by a 12-character prefix; a job checks out one full
    // commit. A provider that cannot say which fails the delivery (503), so a redelivery can retry.
    const headSha = isFullCommitSha(event.head_sha)
      ? event.head_sha
      : await this.deps.uow
          .run(systemScope, (stores) => vcsTokenFor(stores, this.deps, connection))
          .then((token) => ports.api.resolveCommit(token, connection.repository, event.head_sha));
    const trigger: JobTrigger = {
      type: 'pull_request',
      provider: delivery.provider,
      repository: connection.repository,
      number: event.number,
      title: event.title,
      url: event.url,
      head_sha: headSha,
      head_branch: event.head_branch,
      base_branch: event.base_branch,
      author: event.author,
    };
    return this.queuePlan(delivery, connection, trigger, headSha, (stores, at) =>
      cancelOlderPullRequestPlans(stores, this.deps, connection, event.number, at),
    );
  }

  /**
   * The files a push changed: the payload's list, or (when the payload was cut) the provider's
   * compare API between the commits before and after. Null: every file (a new branch has no
   * commit before it, and a compare that fails cannot say which files changed).
   */
  private async changedFiles(ports: VcsPort, event: PushEvent, connection: VcsConnection): Promise<string[] | null> {
    if (event.changed_files !== null) return event.changed_files;
    if (event.before_sha === null || connection.paths.length === 0) return null;
    try {
      const token = await this.deps.uow.run(systemScope, (stores) => vcsTokenFor(stores, this.deps, connection));
      return await ports.api.changedFiles(token, connection.repository, event.before_sha, event.commit_sha);
    } catch (error) {
      if (isDomainError(error)) return null;
      throw error;
    }
  }

  /** A verified delivery that plans nothing for this connection is still remembered (its redelivery too does nothing). */
  private async recordOnly(delivery: VcsDelivery, connection: VcsConnection): Promise<null> {
    await this.deps.uow.run(systemScope, (stores) =>
      stores.vcs.recordDelivery(delivery.provider, deliveryKey(delivery, connection), isoNow(this.deps)),
    );
    return null;
  }

  /**
   * In one unit of work: the delivery is remembered, and the PLAN queued with its audit entry, so
   * a failure leaves neither (the provider's redelivery then plans).
   */
  private async queuePlan(
    delivery: VcsDelivery,
    connection: VcsConnection,
    trigger: JobTrigger,
    commit: string,
    before: (stores: Stores, at: string) => Promise<Job[]>,
  ): Promise<Queued | null> {
    return this.deps.uow.run(systemScope, async (stores) => {
      const at = isoNow(this.deps);
      if (!(await stores.vcs.recordDelivery(delivery.provider, deliveryKey(delivery, connection), at))) return null;
      const vine = await stores.vines.get(connection.owner_id, connection.vine_id);
      if (!vine) return null;
      const cancelled = [
        ...(await before(stores, at)),
        // As for run triggers: the vine's queued drift checks give way to the new job.
        ...(await cancelQueuedDriftChecks(stores, vine.owner_id, vine.id, at)),
      ];
      const job = await createGitJob(stores, this.deps, vine, 'PLAN', trigger, commit, null, at);
      await recordAudit(stores, this.deps, 'system', {
        action: 'job.create',
        target: { type: 'job', id: job.id },
        owner_id: job.owner_id,
        details: {
          job_type: job.job_type,
          vine_id: vine.id,
          trigger: trigger.type,
          commit_sha: commit,
          delivery_id: delivery.delivery_id,
          ...(trigger.type === 'pull_request' ? { pull_request: trigger.number } : {}),
        },
      });
      return { job, cancelled };
    });
  }
}

/** A delivery id acts once per connection (GitLab repeats an event's id across the hooks it calls). */
function deliveryKey(delivery: VcsDelivery, connection: VcsConnection): string {
  return `${delivery.delivery_id}/${connection.vine_id}`;
}

/** Whether a push touching `files` (null: every file) concerns a connection with these path globs (none: every file). */
export function touchesPaths(files: readonly string[] | null, paths: readonly string[]): boolean {
  if (paths.length === 0 || files === null) return true;
  const matches = globMatcher(paths);
  return files.some((file) => matches(file));
}

/** A new commit on a pull request: its older queued plans of the vine are cancelled. */
async function cancelOlderPullRequestPlans(
  stores: Stores,
  deps: CoreDeps,
  connection: VcsConnection,
  number: number,
  at: string,
): Promise<Job[]> {
  const queued = await stores.jobs.list(connection.owner_id, { vine_id: connection.vine_id, status: 'QUEUED' });
  const cancelled: Job[] = [];
  for (const job of queued) {
    if (job.job_type !== 'PLAN' || job.trigger.type !== 'pull_request' || job.trigger.number !== number) continue;
    const updated = await stores.jobs.update(job.owner_id, job.id, job.status, {
      status: transitionJob(job.status, 'cancel'),
      finished_at: at,
      error_message: `cancelled: a newer commit of pull request #${number} was pushed`,
    });
    if (!updated) continue;
    cancelled.push(updated);
    // Its commit's pending status becomes `error` (cancelled); the newer commit gets its own.
    await enqueueVcsFeedback(stores, deps, updated, 'ended');
  }
  return cancelled;
}
