import type { GitProvider } from '../domain/enums.js';
import { globMatcher } from '../domain/globs.js';
import { isDomainError, UnauthorizedError, ValidationError } from '../domain/errors.js';
import type { Job, JobTrigger } from '../domain/records.js';
import { isUuid } from '../domain/validation.js';
import { isFullCommitSha, type VcsConnection, type VcsDelivery, type VcsEvent } from '../domain/vcs.js';
import type { WebhookRequestParts } from '../ports/VcsApi.js';
import { type Stores, systemScope } from '../ports/UnitOfWork.js';
import { pullRequestPlanning, reportIgnoredForkPullRequest } from './forkPullRequests.js';
import { ancestryNote, type CheckedPush, checkPushAncestry, newestKnownCommit } from './pushAncestry.js';
import { readWebhookBody } from './webhookBody.js';
import type { JobLifecycle } from '../jobs/JobLifecycle.js';
import { type CoreDeps, isoNow, type VcsPort } from '../usecases/CoreDeps.js';
import { openWebhookSecret, vcsTokenFor } from '../usecases/vcsTokens.js';

type PushEvent = Extract<VcsEvent, { kind: 'push' }>;
type PullRequestEvent = Extract<VcsEvent, { kind: 'pull_request' }>;

/** What a delivery queues, decided in the unit of work that queues it. */
interface PlanToQueue {
  trigger: JobTrigger;
  /** A `SYSTEM` line for the new job's log, if any. */
  note: string | null;
  /** The Trellis user who caused it (the pusher signed in with that account), if known. */
  caused_by?: string | null;
}

/** What a webhook delivery did: the jobs it queued (none for a ping, an ignored event or a redelivery). */
export interface WebhookOutcome {
  jobs: Job[];
}

/** A webhook request as it arrives: the connection its URL names, its headers, its body still streaming. */
export interface WebhookDeliveryRequest {
  /** `?vine=` of the hook URL Trellis gave (`VcsConnectionView.webhook_url`). */
  vine: unknown;
  /** Header names in lower case. */
  headers: WebhookRequestParts['headers'];
  body: AsyncIterable<Uint8Array>;
  /** `Content-Length`, when the request declared one. */
  declaredBytes: number | null;
}

/** What a verified delivery is remembered by: its id, and the hash of its signed body (a replay under a new id). */
interface DeliveryKeys {
  provider: GitProvider;
  keys: string[];
}

/**
 * Webhooks to jobs (issues 13 and 23). The hook URL names the connection (`?vine=`), so a
 * delivery costs one signature check, with that connection's secret, made as the body streams in;
 * an unknown connection costs nothing. Only a verified body is parsed. A delivery acts once: its
 * id, and the hash of its body, are remembered per connection (a provider's redelivery repeats
 * the id; a replay of an old delivery repeats the body).
 *
 * - A push to the connection's branch that touches its `paths` queues a PLAN of that exact commit;
 *   when the connection auto-deploys, the commit is first checked newer than what the vine
 *   deployed (`checkPushAncestry`), or it is never deployed by itself.
 * - A pull request into the branch queues a speculative PLAN of its head commit and cancels the
 *   older queued plans of the same pull request; a fork's only as `fork_pull_requests` allows.
 */
export class GitEventUseCases {
  constructor(
    private readonly deps: CoreDeps,
    private readonly lifecycle: JobLifecycle,
  ) {}

  /**
   * `POST /api/webhooks/{provider}?vine=`. Throws `401 webhook_signature_invalid` when the
   * signature does not match the secret of the connection the URL names, `413 webhook_too_large`.
   */
  async receive(provider: GitProvider, request: WebhookDeliveryRequest): Promise<WebhookOutcome> {
    const ports = this.deps.vcs[provider];
    // A provider this server is not configured for can have no connection: as for an unknown one.
    if (!ports) return { jobs: [] };
    if (!isUuid(request.vine)) {
      throw new ValidationError('the webhook URL names no connection: use the webhook_url of the connection', [
        { path: 'query.vine', message: 'the id of the connected configuration, as in the webhook_url Trellis gave' },
      ]);
    }
    const vineId = request.vine.toLowerCase();
    const connection = await this.deps.uow.read(systemScope, (stores) => stores.vcs.findForDelivery(vineId));
    if (connection === null || connection.provider !== provider) return { jobs: [] };
    const secret = await openWebhookSecret(this.deps.secrets, connection).catch(() => null);
    if (secret === null) throw signatureInvalid();
    const body = await readWebhookBody(
      request.body,
      ports.webhooks.signatureCheck(request.headers, secret),
      request.declaredBytes,
    );
    if (!body.signed) throw signatureInvalid();
    const delivery = ports.webhooks.parse({ headers: request.headers, rawBody: body.rawBody });
    if (delivery === null) {
      throw new ValidationError(`this is not a ${provider} webhook delivery (no event header)`, [
        { path: 'headers', message: `missing the ${provider} event header` },
      ]);
    }
    const { event } = delivery;
    if (event.kind === 'ping' || event.kind === 'other') return { jobs: [] };
    // Signed with this connection's secret, but about another repository: not for this vine.
    if (event.repository.toLowerCase() !== connection.repository.toLowerCase()) return { jobs: [] };
    const keys: DeliveryKeys = {
      provider,
      keys: [`${delivery.delivery_id}/${vineId}`, `sha256:${body.sha256}/${vineId}`],
    };
    const queued =
      event.kind === 'push'
        ? await this.onPush(ports, keys, delivery, event, connection)
        : await this.onPullRequest(ports, keys, delivery, event, connection);
    return { jobs: queued ? [queued] : [] };
  }

  private async onPush(
    ports: VcsPort,
    keys: DeliveryKeys,
    delivery: VcsDelivery,
    event: PushEvent,
    connection: VcsConnection,
  ): Promise<Job | null> {
    if (event.deleted || event.branch === null || event.branch !== connection.branch) {
      return this.recordOnly(keys).then(() => null);
    }
    const files = await this.changedFiles(ports, event, connection);
    if (!touchesPaths(files, connection.paths)) return this.recordOnly(keys).then(() => null);
    const trigger: Extract<JobTrigger, { type: 'push' }> = {
      type: 'push',
      provider: delivery.provider,
      repository: connection.repository,
      branch: event.branch,
      commit_sha: event.commit_sha,
      commit_message: event.commit_message,
      author: event.author,
    };
    const checked = connection.auto_deploy
      ? await checkPushAncestry(this.deps, ports.api, connection, event.commit_sha)
      : null;
    return this.queuePlan(keys, delivery, connection, event.commit_sha, async (stores) => {
      // The pusher is the plan's creator for the separate-approver rule (issue 23).
      const pusher = event.sender_id ? await stores.identities.find(delivery.provider, event.sender_id) : null;
      const caused_by = pusher?.user_id ?? null;
      if (checked === null) return { trigger, note: null, caused_by };
      // Another push queued since the check moved the vine's newest commit: this one was not checked against it.
      const base = await newestKnownCommit(stores, connection.owner_id, connection.vine_id, connection.branch);
      const final: CheckedPush = base === checked.base ? checked : { ancestry: 'unknown', base };
      return {
        trigger: { ...trigger, ancestry: final.ancestry },
        note: ancestryNote(final, trigger.commit_sha),
        caused_by,
      };
    });
  }

  private async onPullRequest(
    ports: VcsPort,
    keys: DeliveryKeys,
    delivery: VcsDelivery,
    event: PullRequestEvent,
    connection: VcsConnection,
  ): Promise<Job | null> {
    if (!connection.pull_requests || event.base_branch !== connection.branch) {
      return this.recordOnly(keys).then(() => null);
    }
    const planning = pullRequestPlanning(connection, event);
    // Bitbucket names a pull request's head by a 12-character prefix; a job checks out one full
    // commit. A provider that cannot say which fails the delivery (503), so a redelivery can retry.
    const headSha = isFullCommitSha(event.head_sha)
      ? event.head_sha
      : await this.deps.uow
          .run(systemScope, (stores) => vcsTokenFor(stores, this.deps, connection))
          .then((token) => ports.api.resolveCommit(token, connection.repository, event.head_sha));
    if (planning === 'ignore') {
      if (await this.recordOnly(keys)) await reportIgnoredForkPullRequest(this.deps, ports.api, connection, headSha);
      return null;
    }
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
      fork: event.fork,
      secrets_withheld: planning === 'plan_without_secrets',
    };
    return this.queuePlan(keys, delivery, connection, headSha, async (stores) => {
      await cancelOlderPullRequestPlans(stores, this.lifecycle, connection, event.number);
      return { trigger, note: null };
    });
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

  /**
   * A verified delivery that plans nothing is still remembered (its redelivery too does nothing);
   * true when it was new.
   */
  private recordOnly(keys: DeliveryKeys): Promise<boolean> {
    return this.deps.uow.run(systemScope, (stores) => firstDelivery(stores, keys, isoNow(this.deps)));
  }

  /**
   * In one unit of work: the delivery is remembered, and the PLAN queued with its audit entry, so
   * a failure leaves neither (the provider's redelivery then plans).
   */
  private async queuePlan(
    keys: DeliveryKeys,
    delivery: VcsDelivery,
    connection: VcsConnection,
    commit: string,
    decide: (stores: Stores) => Promise<PlanToQueue>,
  ): Promise<Job | null> {
    return this.lifecycle.run(systemScope, async (stores) => {
      const at = isoNow(this.deps);
      if (!(await firstDelivery(stores, keys, at))) return null;
      const vine = await stores.vines.get(connection.owner_id, connection.vine_id);
      if (!vine) return null;
      const { trigger, note, caused_by } = await decide(stores);
      const job = await this.lifecycle.queue(stores, {
        owner_id: vine.owner_id,
        job_type: 'PLAN',
        vine,
        commit,
        trigger,
        actor: 'system',
        caused_by: caused_by ?? null,
        audit: {
          trigger: trigger.type,
          commit_sha: commit,
          delivery_id: delivery.delivery_id,
          ...(trigger.type === 'pull_request'
            ? {
                pull_request: trigger.number,
                fork: trigger.fork === true,
                secrets_withheld: trigger.secrets_withheld === true,
              }
            : {}),
          ...(trigger.type === 'push' && trigger.ancestry !== undefined ? { ancestry: trigger.ancestry } : {}),
        },
      });
      if (note !== null) await stores.logs.append(job.owner_id, job.id, note, 'SYSTEM', at);
      return job;
    });
  }
}

function signatureInvalid(): UnauthorizedError {
  return new UnauthorizedError(
    'webhook_signature_invalid',
    'the delivery is not signed with the webhook secret of the connection its URL names',
  );
}

/** Records every key of a delivery; true when none was recorded before. */
async function firstDelivery(stores: Stores, delivery: DeliveryKeys, at: string): Promise<boolean> {
  let first = true;
  for (const key of delivery.keys) {
    if (!(await stores.vcs.recordDelivery(delivery.provider, key, at))) first = false;
  }
  return first;
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
