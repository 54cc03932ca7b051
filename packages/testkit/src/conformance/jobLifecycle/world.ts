import { createHmac, timingSafeEqual } from 'node:crypto';
import {
  type DeliverySignatureCheck,
  identityTokenContext,
  type Job,
  type JsonObject,
  ownerScope,
  pageRequest,
  sealWebhookSecret,
  systemScope,
  type TrellisEvent,
  type UnitOfWork,
  type VcsDelivery,
  type VcsEvent,
  type VcsJobTrigger,
  type VcsWebhookReader,
  type VineView,
  type WebhookRequestParts,
} from '@trellis/core';
import { expect } from 'vitest';
import type { TestCore, TestCoreOptions } from '../../memory/createTestCore.js';
import { seedUser, seedVine, seedWorker, type TestUser, type TestWorker } from '../../memory/builders.js';
import { FakeRepositoryLister } from '../../memory/FakeProviders.js';
import { RecordingVcsApi } from '../../memory/RecordingVcsApi.js';
import { newVcsConnection } from '../stores/vcs.js';

export const REPOSITORY = 'acme/infra';
const HOOK_SECRET = 'lifecycle-hook-secret';
export const sha = (digit: number) => String(digit).repeat(40);

/** A core (on any unit of work) the suite may use for one test, and how to let it go. */
export interface OpenedCore {
  core: TestCore<UnitOfWork>;
  close(): Promise<void>;
}
export type OpenLifecycleCore = (options: Omit<TestCoreOptions, 'wrapStores'>) => Promise<OpenedCore>;

/** Webhook deliveries (the body is the normalized event) signed with HMAC-SHA256 of the body. */
class SignedTestWebhooks implements VcsWebhookReader {
  signatureCheck(headers: WebhookRequestParts['headers'], secret: string): DeliverySignatureCheck {
    const hmac = createHmac('sha256', secret);
    return {
      update: (chunk) => {
        hmac.update(chunk);
      },
      matches: () => {
        const given = Buffer.from(headers['x-test-signature'] ?? '');
        const expected = Buffer.from(hmac.digest('hex'));
        return given.length === expected.length && timingSafeEqual(given, expected);
      },
    };
  }
  parse(request: WebhookRequestParts): VcsDelivery | null {
    const id = request.headers['x-test-delivery'];
    if (id === undefined) return null;
    return { provider: 'github', delivery_id: id, event: JSON.parse(request.rawBody.toString()) as VcsEvent };
  }
}

/** What a change left behind, each line naming a job by its label (`new <TYPE>` for one the change queued). */
export interface Observed {
  /** Notification deliveries: `<event> <job>`. */
  deliveries: string[];
  /** Git provider feedback: `status:<state> <job>` or `comment <job>`. */
  vcs: string[];
  /** Live announcements, in the order published: `<STATUS> <job>`, `queued <job>`, `credentials`. */
  announcements: string[];
  /** Audit entries on jobs: `<action> <job>`. */
  audit: string[];
}

interface Rows {
  jobs: Job[];
  deliveries: { id: string; event: string; job: string | null }[];
  vcs: { id: string; line: string; job: string }[];
  audit: { id: string; action: string; job: string }[];
}

/**
 * One person (`ada`) with an agent, a vine whose git source is connected to `acme/infra` (pull
 * requests planned), and a webhook notification of every event: what the lifecycle rows run in.
 */
export class LifecycleWorld {
  readonly labels = new Map<string, string>();
  private deliverySerial = 0;

  private constructor(
    readonly core: TestCore<UnitOfWork>,
    readonly api: RecordingVcsApi,
    readonly ada: TestUser,
    readonly agent: TestWorker,
    readonly vine: VineView,
    readonly notificationId: string,
  ) {}

  static async open(open: OpenLifecycleCore): Promise<{ world: LifecycleWorld; close(): Promise<void> }> {
    const api = new RecordingVcsApi();
    const opened = await open({
      now: '2026-06-01T09:00:00.000Z',
      vcs: { github: { api, webhooks: new SignedTestWebhooks(), cloneUrl: (r) => `https://github.com/${r}.git` } },
      providers: { signIn: {}, repositories: { github: new FakeRepositoryLister() } },
      settings: {
        workloadIdentity: {
          issuer: 'https://trellis.example.test',
          algorithm: 'ES256',
          tokenLifetimeSeconds: 3600,
          keyRotationSeconds: 0,
        },
      },
    });
    const { core } = opened;
    const ada = await seedUser(core, { email: 'ada@example.test' });
    const agent = await seedWorker(core, ada, { name: 'agent', heartbeat: true });
    const vine = await seedVine(core, ada, {
      name: 'network',
      source: { type: 'git', url: `https://github.com/${REPOSITORY}.git`, ref: 'main', path: null },
    });
    // Ada's GitHub sign-in: the control plane fetches her connected vine's commits with its token.
    const token = await core.secrets.seal('gho_lifecycle_token', identityTokenContext('github', 'ada-1'));
    await core.uow.run(systemScope, (stores) =>
      stores.identities.upsert({
        user_id: ada.userId,
        provider: 'github',
        provider_user_id: 'ada-1',
        provider_token: token,
        scopes: 'repo',
      }),
    );
    const sealed = await sealWebhookSecret(core.secrets, vine.id, HOOK_SECRET);
    await core.uow.run(systemScope, (stores) =>
      stores.vcs.put(
        newVcsConnection(ada.userId, vine.id, {
          repository: REPOSITORY,
          paths: [],
          webhook_mode: 'manual',
          hook_id: null,
          webhook_secret_sealed: sealed,
          created_at: core.clock.now().toISOString(),
          updated_at: core.clock.now().toISOString(),
        }),
      ),
    );
    const notification = await core.useCases.notifications.create(ada, {
      name: 'everything',
      kind: 'webhook',
      url: 'https://hooks.example.test/trellis',
      events: ['job.succeeded', 'job.failed', 'job.cancelled', 'drift.detected', 'plan.needs_approval'],
    });
    return { world: new LifecycleWorld(core, api, ada, agent, vine, notification.id), close: opened.close };
  }

  /** Names `job` in what the rows observe. */
  name(job: Job | { id: string }, label: string): void {
    this.labels.set(job.id, label);
  }

  /** A signed webhook delivery of `event` to the vine's hook URL, as the provider sends it. */
  async receive(event: VcsEvent): Promise<Job[]> {
    const rawBody = Buffer.from(JSON.stringify(event));
    const signature = createHmac('sha256', HOOK_SECRET).update(rawBody).digest('hex');
    this.deliverySerial += 1;
    const headers = { 'x-test-delivery': `delivery-${this.deliverySerial}`, 'x-test-signature': signature };
    const body = (async function* () {
      yield rawBody;
    })();
    const request = { vine: this.vine.id, headers, body, declaredBytes: rawBody.length };
    return (await this.core.useCases.gitEvents.receive('github', request)).jobs;
  }

  /** A push of `commit` to the connected branch: its PLAN. */
  async push(commit: string): Promise<Job> {
    const [plan] = await this.receive({
      kind: 'push',
      repository: REPOSITORY,
      branch: 'main',
      deleted: false,
      before_sha: null,
      commit_sha: commit,
      commit_message: 'change the network',
      author: 'rosa',
      changed_files: ['main.tf'],
    });
    if (!plan) throw new Error('the push queued no plan');
    return plan;
  }

  /** Pull request #7 at `head`: its speculative PLAN. */
  async pullRequest(head: string, action: 'opened' | 'updated' = 'opened'): Promise<Job> {
    const [plan] = await this.receive({
      kind: 'pull_request',
      action,
      repository: REPOSITORY,
      number: 7,
      title: 'More subnets',
      url: `https://github.com/${REPOSITORY}/pull/7`,
      head_sha: head,
      head_branch: 'subnets',
      base_branch: 'main',
      author: 'rosa',
      fork: false,
    });
    if (!plan) throw new Error('the pull request queued no plan');
    return plan;
  }

  /** `worker` (the agent by default) claims the next job, which must be `job`. */
  async claim(job: Job, worker: TestWorker = this.agent): Promise<Job> {
    const claimed = await this.core.useCases.jobs.claim(worker);
    expect(claimed?.job.id).toBe(job.id);
    return claimed?.job as Job;
  }

  report(job: Job, status: string, metadata?: JsonObject, worker: TestWorker = this.agent): Promise<Job> {
    return this.core.useCases.jobs.reportStatus(worker, job.id, {
      status,
      ...(metadata ? { execution_metadata: metadata } : {}),
    });
  }

  /** Runs a person's job of `type` on `vine` to SUCCESS. */
  async succeed(type: 'PLAN' | 'DEPLOY' | 'DESTROY', vine: { id: string } = this.vine): Promise<Job> {
    const job = await this.core.useCases.jobs.create(this.ada, { job_type: type, configuration_id: vine.id });
    await this.claim(job);
    return this.report(job, 'SUCCESS');
  }

  /** A git-driven trigger of the connected repository (for jobs queued without a webhook). */
  pushTrigger(commit: string): VcsJobTrigger {
    return {
      type: 'push',
      provider: 'github',
      repository: REPOSITORY,
      branch: 'main',
      commit_sha: commit,
      commit_message: 'change the network',
      author: 'rosa',
    };
  }

  private async rows(): Promise<Rows> {
    const owner = this.ada.userId;
    return this.core.uow.read(ownerScope(owner), async (stores) => {
      const request = pageRequest({ limit: 200 });
      const jobs = await stores.jobs.list(owner);
      const deliveries = (await stores.outbox.pageDeliveries(owner, this.notificationId, request)).items;
      const vcs = (await Promise.all(jobs.map((job) => stores.outbox.listVcsFeedback(owner, job.id)))).flat();
      const audit = (await stores.audit.page(owner, {}, request)).items;
      return {
        jobs,
        deliveries: deliveries.map((d) => ({
          id: d.id,
          event: d.event,
          job: ((d.payload.job as { id?: string } | null) ?? null)?.id ?? null,
        })),
        vcs: vcs.map((item) => ({
          id: item.id,
          line: item.payload.kind === 'status' ? `status:${item.payload.status.state}` : 'comment',
          job: item.job_id,
        })),
        audit: audit
          .filter((entry) => entry.target.type === 'job')
          .map((entry) => ({ id: entry.id, action: entry.action, job: entry.target.id })),
      };
    });
  }

  /** Runs `change` and says what it left behind: outbox rows, audit entries and announcements. */
  async observe(change: () => Promise<unknown>): Promise<Observed> {
    const before = await this.rows();
    const published = this.core.events.published.length;
    await change();
    const after = await this.rows();
    const label = (id: string | null) => {
      if (id === null) return '-';
      const job = after.jobs.find((j) => j.id === id);
      return this.labels.get(id) ?? `new ${job?.job_type ?? '?'}`;
    };
    const added = <T extends { id: string }>(rows: T[], earlier: T[]) =>
      rows.filter((row) => !earlier.some((seen) => seen.id === row.id));
    return {
      deliveries: added(after.deliveries, before.deliveries)
        .map((d) => `${d.event} ${label(d.job)}`)
        .sort(),
      vcs: added(after.vcs, before.vcs)
        .map((item) => `${item.line} ${label(item.job)}`)
        .sort(),
      announcements: this.core.events.published.slice(published).map((event) => announcement(event, label)),
      audit: added(after.audit, before.audit)
        .map((entry) => `${entry.action} ${label(entry.job)}`)
        .sort(),
    };
  }
}

function announcement(event: TrellisEvent, label: (id: string) => string): string {
  switch (event.type) {
    case 'job_queued':
      return `queued ${label(event.job_id)}`;
    case 'job_status_changed':
      return `${event.status} ${label(event.job_id)}`;
    case 'worker_credentials_changed':
      return 'credentials';
    case 'api_credentials_changed':
      return 'api credentials';
    case 'log_appended':
      return `log ${label(event.job_id)}`;
  }
}
