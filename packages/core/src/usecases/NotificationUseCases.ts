import { recordAudit } from './audit.js';
import { createHmac } from 'node:crypto';
import { isIP } from 'node:net';
import type { UserActor } from '../domain/actors.js';
import { RateLimitedError, ValidationError } from '../domain/errors.js';
import {
  type DeliveryAttempt,
  DELIVERY_UNREACHABLE,
  isRetryableAttempt,
  isSuccessfulAttempt,
  MAX_NOTIFICATION_URL_LENGTH,
  NOTIFICATION_EVENTS,
  NOTIFICATION_KINDS,
  NOTIFICATION_TEST_EVENT,
  type Notification,
  type NotificationDelivery,
  type NotificationEvent,
  type NotificationKind,
  type NotificationSettings,
  isPrivateAddress,
} from '../domain/notifications.js';
import { type PageQuery, type PageResult, pageRequest, pageResult } from '../domain/pagination.js';
import { isOneOf } from '../domain/enums.js';
import { optionalUuid, requireName, requireUuid } from '../domain/validation.js';
import type { DeliveryOutcome } from '../ports/NotificationStore.js';
import { ownerScope, type Scope, visibleOwners } from '../ports/UnitOfWork.js';
import {
  deliverDueRows,
  finalOutcome,
  type OutboxDeliverer,
  outboxLeaseUntil,
  retryOutcome,
} from '../outbox/delivery.js';
import type { WebhookResponse } from '../ports/WebhookSender.js';
import { Access, mayAct, parseOwnerFilter, scopeOf } from './Access.js';
import type { CoreDeps } from './CoreDeps.js';
import { newDelivery } from './notificationOutbox.js';
import { NotFoundError } from '../domain/errors.js';

/**
 * What the API shows of a notification: never its secret; its URL in full only to those who
 * manage notifications (issue 23): a Slack incoming webhook's or a receiver's URL is a credential.
 */
export interface NotificationView {
  id: string;
  name: string;
  kind: NotificationKind;
  /** The whole URL, or (`url_masked`) only its scheme and host, the rest shown as `…`. */
  url: string;
  url_masked: boolean;
  events: NotificationEvent[];
  vineyard_id: string | null;
  org_id: string | null;
  created_at: string;
}

/** `POST /api/notifications`: the view and, this once, a webhook's signing secret. */
export interface CreatedNotification extends NotificationView {
  secret: string | null;
}

export interface CreateNotificationInput {
  name?: unknown;
  kind?: unknown;
  url?: unknown;
  events?: unknown;
  vineyard_id?: unknown;
  org_id?: unknown;
}

/** `reveal`: whether the reader manages the owner's notifications (`notifications.manage`). */
export function notificationView(notification: Notification, reveal: boolean): NotificationView {
  const masked = reveal ? null : maskedUrl(notification.url);
  return {
    id: notification.id,
    name: notification.name,
    kind: notification.kind,
    url: masked ?? notification.url,
    url_masked: masked !== null,
    events: notification.events,
    vineyard_id: notification.vineyard_id,
    org_id: notification.org_id,
    created_at: notification.created_at,
  };
}

/**
 * A URL as someone who may not manage notifications sees it: scheme and host, `…` for the rest
 * (`https://hooks.slack.com/…`). Null when nothing follows the host (nothing to hide).
 */
export function maskedUrl(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '…';
  }
  if (parsed.pathname === '/' && parsed.search === '' && parsed.hash === '') return null;
  return `${parsed.protocol}//${parsed.host}/…`;
}

/** What the API shows of a delivery (its body is what was sent). */
export type DeliveryView = NotificationDelivery;

const SECRET_BYTES = 32;

/** The SecretBox context of a notification's secret: it opens for this notification only. */
function secretContext(notificationId: string): string {
  return `notification:${notificationId}`;
}

/**
 * Notifications (issue 14): their management, the test delivery, and the deliverer of the
 * outbox's `notification` rows. Owned by a person or an organization (managed by its admins:
 * `notifications.manage`).
 */
export class NotificationUseCases implements OutboxDeliverer<'notification'> {
  private readonly access: Access;

  constructor(private readonly deps: CoreDeps) {
    this.access = new Access(deps);
  }

  private get settings(): NotificationSettings {
    return this.deps.settings.notifications;
  }

  /** `POST /api/notifications`. A webhook's secret is in the answer and nowhere else, ever. */
  async create(actor: UserActor, input: CreateNotificationInput): Promise<CreatedNotification> {
    const name = requireName(input.name, 'name');
    if (!isOneOf(NOTIFICATION_KINDS, input.kind)) {
      throw new ValidationError(`kind must be one of ${NOTIFICATION_KINDS.join(', ')}`, [
        { path: 'kind', message: `must be one of ${NOTIFICATION_KINDS.join(', ')}` },
      ]);
    }
    const kind = input.kind;
    const events = requireEvents(input.events);
    const vineyardId = optionalUuid(input.vineyard_id, 'vineyard_id');
    const url = await this.checkUrl(input.url);
    const { ownerId, scope } = await this.access.ownerFor(actor, input.org_id, 'notifications.manage');
    const id = this.deps.random.uuid();
    const secret =
      kind === 'webhook' ? `whsec_${Buffer.from(this.deps.random.bytes(SECRET_BYTES)).toString('hex')}` : null;
    const record: Notification = {
      id,
      owner_id: ownerId,
      created_by: actor.userId,
      org_id: ownerId === actor.userId ? null : ownerId,
      name,
      kind,
      url,
      events,
      vineyard_id: vineyardId,
      secret_sealed: secret === null ? null : await this.deps.secrets.seal(secret, secretContext(id)),
      created_at: this.deps.clock.now().toISOString(),
    };
    const created = await this.deps.uow.run(scope, async (stores) => {
      if (vineyardId !== null && !(await stores.vineyards.get(ownerId, vineyardId))) {
        throw new NotFoundError('vineyard');
      }
      const saved = await stores.notifications.create(record);
      await recordAudit(stores, this.deps, actor, {
        action: 'notification.create',
        target: { type: 'notification', id: saved.id },
        owner_id: saved.owner_id,
        details: { name: saved.name, kind: saved.kind, events: saved.events.join(',') },
      });
      return saved;
    });
    return { ...notificationView(created, true), secret };
  }

  /** `GET /api/notifications`: the caller's and their organizations' (`?org_id=` narrows). */
  async list(actor: UserActor, query: PageQuery & { org_id?: unknown }): Promise<PageResult<NotificationView>> {
    const request = pageRequest(query, this.deps.settings.pageLimits);
    const memberships = await this.access.memberships(actor);
    const scope = scopeOf(actor, memberships, parseOwnerFilter(query.org_id));
    const view = (notification: Notification) =>
      notificationView(notification, mayAct(actor, memberships, notification.owner_id, 'notifications.manage'));
    if (scope === null) return pageResult({ items: [], next: null }, request, view);
    const owners = visibleOwners(scope) ?? [];
    return this.deps.uow.read(scope, async (stores) =>
      pageResult(await stores.notifications.page(owners, request), request, view),
    );
  }

  /** `GET /api/notifications/{id}`. */
  async get(actor: UserActor, id: unknown): Promise<NotificationView> {
    const { record } = await this.locate(actor, id, 'read');
    const reveal = mayAct(actor, await this.access.memberships(actor), record.owner_id, 'notifications.manage');
    return notificationView(record, reveal);
  }

  /** `DELETE /api/notifications/{id}`: with its deliveries. */
  async delete(actor: UserActor, id: unknown): Promise<void> {
    const { record, scope } = await this.locate(actor, id, 'notifications.manage');
    await this.deps.uow.run(scope, async (stores) => {
      await stores.notifications.delete(record.owner_id, record.id);
      await recordAudit(stores, this.deps, actor, {
        action: 'notification.delete',
        target: { type: 'notification', id: record.id },
        owner_id: record.owner_id,
        details: { name: record.name },
      });
    });
  }

  /** `GET /api/notifications/{id}/deliveries`, newest first, each with its attempts. */
  async deliveries(actor: UserActor, id: unknown, query: PageQuery): Promise<PageResult<DeliveryView>> {
    const request = pageRequest(query, this.deps.settings.pageLimits);
    const { record, scope } = await this.locate(actor, id, 'read');
    return this.deps.uow.read(scope, async (stores) =>
      pageResult(await stores.outbox.pageDeliveries(record.owner_id, record.id, request), request, (d) => d),
    );
  }

  /**
   * `POST /api/notifications/{id}/test`: a `notification.test` delivery, written to the outbox and
   * tried at once; a retryable failure is retried by the worker like any other.
   */
  async test(actor: UserActor, id: unknown): Promise<DeliveryView> {
    const { record, scope } = await this.locate(actor, id, 'notifications.manage');
    await this.countTest(record.owner_id);
    const now = this.deps.clock.now().toISOString();
    const payload = {
      event: NOTIFICATION_TEST_EVENT,
      occurred_at: now,
      job: null,
      vine: null,
      vineyard: null,
      url: this.settings.webUrl,
    };
    // Leased to this request from the start, so no delivery task sends it at the same time.
    const lease = outboxLeaseUntil(this.deps);
    const delivery = await this.deps.uow.run(scope, (stores) =>
      stores.outbox.add('notification', {
        ...newDelivery(this.deps, record, NOTIFICATION_TEST_EVENT, payload),
        next_attempt_at: lease,
      }),
    );
    return (await this.attempt(delivery, record)) ?? delivery;
  }

  /**
   * A test delivery is an outbound request on demand: an owner (whoever of its members asks) gets
   * `testsPerMinute` of them a minute, else `429 rate_limited` (issue 23).
   */
  private async countTest(ownerId: string): Promise<void> {
    const now = this.deps.clock.now();
    const count = await this.deps.rateLimits.hit(`notification-test:${ownerId}`, now, 60);
    if (count.hits <= this.settings.testsPerMinute) return;
    const seconds = Math.max(1, Math.ceil((count.resetsAt.getTime() - now.getTime()) / 1000));
    throw new RateLimitedError(
      `at most ${this.settings.testsPerMinute} test deliveries a minute per owner; retry in ${seconds} s`,
      seconds,
    );
  }

  /**
   * A round of the outbox over notification deliveries only (the scheduled task sends every
   * kind): takes due deliveries (never one another replica holds), sends each and records the
   * attempt. Returns how many it took.
   */
  async deliverDue(): Promise<number> {
    return (await deliverDueRows(this.deps, { notification: this }, ['notification'])).length;
  }

  /** One try at a claimed delivery (null when its notification is gone). */
  async deliver(delivery: NotificationDelivery): Promise<NotificationDelivery | null> {
    const notification = await this.deps.uow.read(ownerScope(delivery.owner_id), (stores) =>
      stores.notifications.find(delivery.notification_id),
    );
    return notification ? this.attempt(delivery, notification) : null;
  }

  /** One try at `delivery`, recorded with what follows from it. */
  private async attempt(
    delivery: NotificationDelivery,
    notification: Notification,
  ): Promise<NotificationDelivery | null> {
    const body = await this.body(delivery, notification);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'Trellis-Notifications',
      'x-trellis-event': delivery.event,
      'x-trellis-delivery': delivery.id,
    };
    const started = this.deps.clock.now();
    const startedMs = performance.now();
    let response: WebhookResponse;
    try {
      if (notification.secret_sealed !== null) {
        const secret = await this.deps.secrets.open(notification.secret_sealed, secretContext(notification.id));
        headers['x-trellis-signature'] = `sha256=${signBody(secret, body)}`;
      }
    } catch {
      // A secret sealed with a key this server no longer has can never be signed: give up, say why.
      response = { kind: 'refused', error: 'the signing secret cannot be opened (TRELLIS_ENCRYPTION_KEY changed?)' };
      return this.record(delivery, started, startedMs, response);
    }
    try {
      response = await this.deps.webhooks.send({
        url: notification.url,
        headers,
        body,
        timeoutMs: this.settings.timeoutSeconds * 1000,
        allowPrivateAddresses: this.settings.allowPrivateUrls,
      });
    } catch {
      response = { kind: 'failed', error: DELIVERY_UNREACHABLE };
    }
    // One error for every connection that failed, whatever the reason (refused, reset, timed
    // out, not HTTP): the attempt must not tell which ports of a host are open (issue 23).
    if (response.kind === 'failed') response = { kind: 'failed', error: DELIVERY_UNREACHABLE };
    return this.record(delivery, started, startedMs, response);
  }

  /** Records an attempt and what follows from it. */
  private async record(
    delivery: NotificationDelivery,
    started: Date,
    startedMs: number,
    response: WebhookResponse,
  ): Promise<NotificationDelivery | null> {
    const attempt: DeliveryAttempt = {
      at: started.toISOString(),
      status_code: response.kind === 'answered' ? response.status : null,
      error:
        response.kind === 'answered' ? (response.status >= 300 ? `HTTP ${response.status}` : null) : response.error,
      duration_ms: Math.max(0, Math.round(performance.now() - startedMs)),
      response_excerpt: response.kind === 'answered' ? response.excerpt : null,
    };
    const outcome = this.outcome(delivery, attempt, response.kind === 'refused');
    return this.deps.uow.run(ownerScope(delivery.owner_id), (stores) =>
      stores.outbox.recordAttempt('notification', delivery.owner_id, delivery.id, attempt, outcome),
    );
  }

  /** Delivered, given up, or (no answer, 5xx, 408, 429) again after the outbox's backoff. */
  private outcome(delivery: NotificationDelivery, attempt: DeliveryAttempt, refused: boolean): DeliveryOutcome {
    const at = this.deps.clock.now().toISOString();
    if (isSuccessfulAttempt(attempt)) return finalOutcome(at, 'delivered');
    if (refused || !isRetryableAttempt(attempt)) return finalOutcome(at, 'failed');
    return retryOutcome(this.deps, delivery.created_at, delivery.attempts.length + 1, null);
  }

  /** The raw body: the payload as JSON for a webhook, an incoming-webhook message for Slack. */
  private async body(delivery: NotificationDelivery, notification: Notification): Promise<string> {
    if (notification.kind === 'webhook') return JSON.stringify(delivery.payload);
    return JSON.stringify(slackMessage(delivery));
  }

  /**
   * `url` as a notification may use it: `https://` (or `http://` where private receivers are
   * allowed), no credentials, and a host none of whose addresses is private, loopback or
   * link-local (unless allowed). `400 notification_url_refused` otherwise.
   */
  private async checkUrl(value: unknown): Promise<string> {
    if (typeof value !== 'string' || value.length === 0 || value.length > MAX_NOTIFICATION_URL_LENGTH) {
      throw new ValidationError(`url must be a URL of at most ${MAX_NOTIFICATION_URL_LENGTH} characters`, [
        { path: 'url', message: 'required' },
      ]);
    }
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new ValidationError('url is not a URL', [{ path: 'url', message: 'not a URL' }]);
    }
    const allowPrivate = this.settings.allowPrivateUrls;
    if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) {
      throw refused('a notification URL must start with https://');
    }
    if (url.username !== '' || url.password !== '') throw refused('a notification URL may not carry credentials');
    if (!allowPrivate) {
      const host = url.hostname.replace(/^\[|\]$/g, '');
      let addresses: string[];
      try {
        addresses = isIP(host) ? [host] : await this.deps.webhooks.resolve(host);
      } catch {
        throw refused(`the host ${host} does not resolve`);
      }
      if (addresses.length === 0) throw refused(`the host ${host} does not resolve`);
      if (addresses.some(isPrivateAddress)) {
        throw refused(`the host ${host} has a private, loopback or link-local address`);
      }
    }
    return url.toString();
  }

  private async locate(
    actor: UserActor,
    id: unknown,
    action: 'read' | 'notifications.manage',
  ): Promise<{ record: Notification; scope: Scope }> {
    const notificationId = requireUuid(id, 'id');
    return this.access.locate(actor, action, 'notification_not_found', (stores) =>
      stores.notifications.find(notificationId),
    );
  }
}

function refused(message: string): ValidationError {
  return new ValidationError(message, [{ path: 'url', message }], 'notification_url_refused');
}

function requireEvents(value: unknown): NotificationEvent[] {
  if (!Array.isArray(value) || value.length === 0 || !value.every((event) => isOneOf(NOTIFICATION_EVENTS, event))) {
    throw new ValidationError(`events must be a non-empty list of ${NOTIFICATION_EVENTS.join(', ')}`, [
      { path: 'events', message: `each one of ${NOTIFICATION_EVENTS.join(', ')}` },
    ]);
  }
  return [...new Set(value as NotificationEvent[])];
}

/** Hex HMAC-SHA256 of the raw body under the secret: `X-Trellis-Signature: sha256=<this>`. */
export function signBody(secret: string, body: string): string {
  return createHmac('sha256', secret).update(body, 'utf8').digest('hex');
}

/** A Slack incoming-webhook message for a delivery. */
export function slackMessage(delivery: NotificationDelivery): { text: string; blocks: unknown[] } {
  const payload = delivery.payload as {
    job?: { id?: string; job_type?: string; status?: string; error_message?: string | null } | null;
    vine?: { name?: string } | null;
    vineyard?: { name?: string } | null;
    url?: string | null;
  };
  const where = [payload.vineyard?.name, payload.vine?.name].filter(Boolean).join(' / ');
  const what = payload.job ? `${payload.job.job_type} ${payload.job.status}` : 'a test message';
  const text = `Trellis ${delivery.event}: ${what}${where ? ` on ${where}` : ''}${payload.url ? ` <${payload.url}|open>` : ''}`;
  const detail = payload.job?.error_message ? `\n> ${payload.job.error_message}` : '';
  return { text, blocks: [{ type: 'section', text: { type: 'mrkdwn', text: `${text}${detail}` } }] };
}
