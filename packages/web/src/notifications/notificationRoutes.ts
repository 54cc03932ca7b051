import { DomainError, statusOfError } from '@trellis/core';
import type { Router } from 'express';
import { notificationPage, notificationsPage } from '../pages/notificationsPage.js';
import { orgIdOf, pageQuery, Redirect, type WebRouteDeps } from '../routing.js';
import { vineyardNames } from '../vineyardNames.js';

/** Notifications: listed, made, tested and deleted by forms; each with its deliveries. */
export function notificationRoutes(router: Router, deps: WebRouteDeps): void {
  router.get(
    '/notifications',
    deps.headers,
    deps.signedIn(async ({ req, user, base, now }) => {
      const orgId = orgIdOf(req.query.org_id);
      const notifications = await deps.useCases.notifications.list(user, {
        ...pageQuery(req),
        org_id: orgId ?? undefined,
      });
      return notificationsPage({ base, notifications, orgId, now });
    }),
  );

  // The secret is shown in this answer only, never put in a URL or a redirect.
  router.post(
    '/notifications',
    deps.headers,
    ...deps.sameOriginForm,
    deps.signedIn(async ({ req, user, base, now }) => {
      const form = (req.body ?? {}) as Record<string, unknown>;
      const orgId = orgIdOf(form.org_id);
      const list = () => deps.useCases.notifications.list(user, { org_id: orgId ?? undefined });
      const events = form.events === undefined ? [] : Array.isArray(form.events) ? form.events : [form.events];
      try {
        const created = await deps.useCases.notifications.create(user, {
          name: form.name,
          kind: form.kind,
          url: form.url,
          events,
          org_id: orgId ?? undefined,
        });
        return notificationsPage({ base, notifications: await list(), orgId, now, created, status: 201 });
      } catch (error) {
        if (!(error instanceof DomainError) || !['validation', 'forbidden'].includes(error.kind)) throw error;
        const status = statusOfError(error);
        return notificationsPage({ base, notifications: await list(), orgId, now, error: error.message, status });
      }
    }),
  );

  router.post(
    '/notifications/:id/test',
    deps.headers,
    ...deps.sameOriginForm,
    deps.signedIn(async ({ req, user, base, now }) => {
      const tested = await deps.useCases.notifications.test(user, req.params.id);
      const notifications = await deps.useCases.notifications.list(user, {});
      return notificationsPage({ base, notifications, orgId: null, now, tested });
    }),
  );

  router.post(
    '/notifications/:id/delete',
    deps.headers,
    ...deps.sameOriginForm,
    deps.signedIn(async ({ req, user }) => {
      await deps.useCases.notifications.delete(user, req.params.id);
      return new Redirect('/notifications');
    }),
  );

  router.get(
    '/notifications/:id',
    deps.headers,
    deps.signedIn(async ({ req, user, base, now }) => {
      const notification = await deps.useCases.notifications.get(user, req.params.id);
      const deliveries = await deps.useCases.notifications.deliveries(user, req.params.id, pageQuery(req));
      const vineyards = await vineyardNames(deps.useCases, user, [notification]);
      return notificationPage({ base, notification, deliveries, now, vineyards });
    }),
  );
}
