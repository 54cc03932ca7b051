import type { GitProvider } from '../domain/enums.js';
import { globMatcher } from '../domain/globs.js';
import { isDomainError, UnauthorizedError, ValidationError } from '../domain/errors.js';
import type { Job, JobTrigger } from '../domain/records.js';
import { isFullCommitSha, type VcsConnection, type VcsDelivery, type VcsEvent } from '../domain/vcs.js';
import type { WebhookRequestParts } from '../ports/VcsApi.js';
import { type Stores, systemScope } from '../ports/UnitOfWork.js';
import type { JobLifecycle } from '../jobs/JobLifecycle.js';
import { type CoreDeps, isoNow, type VcsPort } from './CoreDeps.js';
import { openWebhookSecret, vcsTokenFor } from './vcsTokens.js';

type PushEvent = Extract<VcsEvent, { kind: 'push' }>;
type PullRequestEvent = Extract<VcsEvent, { kind: 'pull_request' }>;

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
  constructor(
    private readonly deps: CoreDeps,
    private readonly lifecycle: JobLifecycle,
  ) {}

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
    for (const connection of verified) {
      const queued =
        event.kind === 'push'
          ? await this.onPush(ports, delivery, event, connection)
          : await this.onPullRequest(ports, delivery, event, connection);
      if (queued) jobs.push(queued);
    }
    return { jobs };
  }

  private async onPush(
    ports: VcsPort,
    delivery: VcsDelivery,
    event: PushEvent,
    connection: VcsConnection,
  ): Promise<Job | null> {
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
    return this.queuePlan(delivery, connection, trigger, event.commit_sha, async () => {});
  }

  private async onPullRequest(
    ports: VcsPort,
    delivery: VcsDelivery,
    event: PullRequestEvent,
    connection: VcsConnection,
  ): Promise<Job | null> {
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
    return this.queuePlan(delivery, connection, trigger, headSha, (stores) =>
      cancelOlderPullRequestPlans(stores, this.lifecycle, connection, event.number),
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
    before: (stores: Stores) => Promise<void>,
  ): Promise<Job | null> {
    return this.lifecycle.run(systemScope, async (stores) => {
      const at = isoNow(this.deps);
      if (!(await stores.vcs.recordDelivery(delivery.provider, deliveryKey(delivery, connection), at))) return null;
      const vine = await stores.vines.get(connection.owner_id, connection.vine_id);
      if (!vine) return null;
      await before(stores);
      return this.lifecycle.queue(stores, {
        owner_id: vine.owner_id,
        job_type: 'PLAN',
        vine,
        commit,
        trigger,
        actor: 'system',
        audit: {
          trigger: trigger.type,
          commit_sha: commit,
          delivery_id: delivery.delivery_id,
          ...(trigger.type === 'pull_request' ? { pull_request: trigger.number } : {}),
        },
      });
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

/**
 * A new commit on a pull request: its older queued plans of the vine are cancelled (their
 * commits' pending statuses become `error`; the newer commit gets its own).
 */
async function cancelOlderPullRequestPlans(
  stores: Stores,
  lifecycle: JobLifecycle,
  connection: VcsConnection,
  number: number,
): Promise<void> {
  const queued = await stores.jobs.list(connection.owner_id, { vine_id: connection.vine_id, status: 'QUEUED' });
  for (const job of queued) {
    if (job.job_type !== 'PLAN' || job.trigger.type !== 'pull_request' || job.trigger.number !== number) continue;
    await lifecycle.end(stores, job, 'cancel', {
      reason: 'superseded',
      actor: 'system',
      message: `cancelled: a newer commit of pull request #${number} was pushed`,
    });
  }
}
