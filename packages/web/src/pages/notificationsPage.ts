import {
  type CreatedNotification,
  type DeliveryView,
  NOTIFICATION_EVENTS,
  type NotificationView,
  type PageResult,
} from '@trellis/core';
import { when, NAME_HINT } from '../format.js';
import { type Html, html } from '../html.js';
import type { Page } from '../layout.js';
import { olderLink } from './olderLink.js';
import { vineyardLabel } from '../policies/policiesPage.js';

export interface NotificationsPageInput {
  base: string;
  notifications: PageResult<NotificationView>;
  /** The organization the list is narrowed to (and a new one is made for); null for everything. */
  orgId: string | null;
  now: Date;
  /** Just made: a webhook's secret is on this page and nowhere else, ever. */
  created?: CreatedNotification;
  /** The answer of a test delivery just sent. */
  tested?: DeliveryView;
  error?: string;
  status?: number;
}

/** Notifications: the list (never a secret), a form to make one, test and delete. */
export function notificationsPage(input: NotificationsPageInput): Page {
  const { base, notifications, orgId, now, created, tested, error } = input;
  const here = `${base}/notifications${orgId ? `?org_id=${encodeURIComponent(orgId)}` : ''}`;
  return {
    status: input.status ?? 200,
    title: 'Notifications',
    section: 'notifications',
    body: html`<h1>Notifications</h1>
${created ? createdNotice(created) : ''}
${tested ? testedNotice(tested) : ''}
<section class="card">
  <h2>${orgId ? html`Notifications of organization <code>${orgId}</code>` : 'Your notifications and your organizations’'}</h2>
  ${
    notifications.items.length === 0
      ? html`<p id="no-notifications">No notifications yet.</p>`
      : html`<div class="table-scroll" role="region" aria-label="Notifications" tabindex="0"><table class="notifications">
  <thead><tr><th>Name</th><th>Kind</th><th>Events</th><th>URL</th><th>Created</th><th></th></tr></thead>
  <tbody>
  ${notifications.items.map((n) => notificationRow(base, n, now))}
  </tbody>
</table></div>`
  }
  ${olderLink(here, notifications)}
</section>
<section class="card">
  <h2>New notification</h2>
  ${error ? html`<p class="error" id="notification-error">${error}</p>` : ''}
  <form method="post" action="${base}/notifications" class="notification-form">
    ${orgId ? html`<input type="hidden" name="org_id" value="${orgId}">` : ''}
    <p><label>Name <input name="name" id="notification-name" required maxlength="100" pattern="[A-Za-z0-9][A-Za-z0-9._\\-]{0,99}" title="${NAME_HINT}" placeholder="ops"></label></p>
    <p><label>Kind <select name="kind" id="notification-kind"><option value="webhook" selected>webhook (signed JSON)</option><option value="slack">Slack incoming webhook</option></select></label></p>
    <p><label>URL <input name="url" id="notification-url" type="url" required maxlength="2048" placeholder="https://hooks.example.com/trellis"></label></p>
    <fieldset><legend>Events</legend>
    ${NOTIFICATION_EVENTS.map(
      (event) =>
        html`<label class="inline"><input type="checkbox" name="events" value="${event}"${event === 'job.failed' ? html` checked` : ''}> ${event}</label> `,
    )}
    </fieldset>
    <p class="actions"><button type="submit" class="button primary" id="create-notification">Create notification</button></p>
  </form>
</section>`,
  };
}

function createdNotice(created: CreatedNotification): Html {
  return html`<section class="card notice" id="created-notification">
  <h2>Notification ${created.name} created</h2>
  ${
    created.secret
      ? html`<p><strong>Copy the signing secret now: it is shown only this once.</strong> Receivers check <code>X-Trellis-Signature</code> with it.</p>
  <div class="code-box">
    <output id="new-secret" class="verification-code" aria-label="Signing secret">${created.secret}</output>
    <button type="button" class="button" data-copy="${created.secret}">Copy</button>
  </div>`
      : html`<p>Slack messages are not signed.</p>`
  }
</section>`;
}

function testedNotice(delivery: DeliveryView): Html {
  const last = delivery.attempts[delivery.attempts.length - 1];
  const answer = last?.status_code != null ? `HTTP ${last.status_code}` : (last?.error ?? 'no answer');
  return html`<section class="card notice" id="test-result">
  <p>Test delivery <code>${delivery.id}</code>: <strong id="test-status">${delivery.status}</strong> (${answer}).</p>
</section>`;
}

/** The receiver's URL; masked for those who do not manage notifications (issue 23), saying so. */
function receiver(n: NotificationView): Html {
  return n.url_masked
    ? html`<code class="masked-url">${n.url}</code> <span class="muted small">(the rest is shown to admins only)</span>`
    : html`<code>${n.url}</code>`;
}

function notificationRow(base: string, n: NotificationView, now: Date): Html {
  return html`<tr id="notification-${n.id}">
    <td><a href="${base}/notifications/${n.id}">${n.name}</a></td>
    <td>${n.kind}</td>
    <td>${n.events.join(', ')}</td>
    <td>${receiver(n)}</td>
    <td>${when(n.created_at, now)}</td>
    <td>
      <form method="post" action="${base}/notifications/${n.id}/test" class="inline"><button type="submit" class="button" data-test="${n.id}">Test</button></form>
      <form method="post" action="${base}/notifications/${n.id}/delete" class="inline"><button type="submit" class="button danger" data-delete="${n.id}">Delete</button></form>
    </td>
  </tr>`;
}

export interface NotificationPageInput {
  base: string;
  notification: NotificationView;
  deliveries: PageResult<DeliveryView>;
  now: Date;
  /** The name of the vineyard the notification is narrowed to, by id (else the id is shown). */
  vineyards?: ReadonlyMap<string, string>;
}

/** One notification and its recent deliveries, each with its attempts. */
export function notificationPage(input: NotificationPageInput): Page {
  const { base, notification: n, deliveries, now } = input;
  return {
    title: `Notification ${n.name}`,
    section: 'notifications',
    body: html`<h1>Notification ${n.name}</h1>
<section class="card">
  <p>${n.kind} to ${receiver(n)} on ${n.events.join(', ')}${n.vineyard_id ? html` (vineyard <a href="${base}/vineyards/${n.vineyard_id}">${vineyardLabel(n.vineyard_id, input.vineyards)}</a>)` : ''}.</p>
</section>
<section class="card">
  <h2>Recent deliveries</h2>
  ${
    deliveries.items.length === 0
      ? html`<p id="no-deliveries">No deliveries yet.</p>`
      : html`<div class="table-scroll" role="region" aria-label="Deliveries" tabindex="0"><table class="deliveries">
  <thead><tr><th>Event</th><th>Status</th><th>Attempts</th><th>Last answer</th><th>Created</th><th>Delivery id</th></tr></thead>
  <tbody>
  ${deliveries.items.map((d) => {
    const last = d.attempts[d.attempts.length - 1];
    const answer = last ? (last.status_code !== null ? `HTTP ${last.status_code}` : (last.error ?? '')) : '–';
    return html`<tr id="delivery-${d.id}" data-status="${d.status}"><td>${d.event}</td><td>${d.status}</td><td>${String(d.attempts.length)}</td><td>${answer}</td><td>${when(d.created_at, now)}</td><td><code>${d.id}</code></td></tr>`;
  })}
  </tbody>
</table></div>`
  }
  ${olderLink(`${base}/notifications/${n.id}`, deliveries)}
  <p><a href="${base}/notifications">All notifications</a></p>
</section>`,
  };
}
