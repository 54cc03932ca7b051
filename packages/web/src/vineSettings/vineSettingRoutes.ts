import type { Router } from 'express';
import { refusedActionPage, unconfirmed } from '../confirmation.js';
import { html } from '../html.js';
import { formField, Redirect, type WebRouteDeps } from '../routing.js';
import { refused } from '../vineyardEdits/refusal.js';

/** The labels of the connection form's fields, to name a refused one as the person saw it. */
const VCS_LABELS = { repository: 'Repository', branch: 'Branch', paths: 'Paths', provider: 'Provider' };

/**
 * A vine's settings on its page (issue 29): the drift schedule, approvals and the repository connection, as
 * plain forms posted here and handed to the use cases the API calls (core judges every value).
 */
export function vineSettingRoutes(router: Router, deps: WebRouteDeps): void {
  const { useCases } = deps;
  const form = [deps.headers, ...deps.sameOriginForm];

  router.post(
    '/configurations/:id/drift-schedule',
    ...form,
    deps.signedIn(async ({ req, user, base }) => {
      const vine = await useCases.vines.get(user, req.params.id);
      const minutes = formField(req, 'interval_minutes') ?? '';
      // A number as the API takes it; anything else goes to core as typed, which says what is wrong.
      const interval = /^\d{1,9}$/.test(minutes) ? Number(minutes) : minutes;
      const driftDetection = formField(req, 'intent') === 'off' ? null : { interval_minutes: interval };
      const result = await refused(() => useCases.vineEdits.update(user, vine.id, { drift_detection: driftDetection }));
      if ('done' in result) return new Redirect(`/configurations/${vine.id}#drift`);
      const back = { path: `/configurations/${vine.id}`, label: `Back to ${vine.name}` };
      return refusedActionPage({ title: 'Schedule not saved', refusal: result.refusal, back, base });
    }),
  );

  router.post(
    '/configurations/:id/approval',
    ...form,
    deps.signedIn(async ({ req, user, base }) => {
      const vine = await useCases.vines.get(user, req.params.id);
      const approval =
        formField(req, 'required') === 'on'
          ? { required: true, separate_approver: formField(req, 'separate_approver') === 'on' }
          : null;
      const result = await refused(() => useCases.vineEdits.update(user, vine.id, { approval }));
      if ('done' in result) return new Redirect(`/configurations/${vine.id}`);
      const back = { path: `/configurations/${vine.id}`, label: `Back to ${vine.name}` };
      return refusedActionPage({ title: 'Approvals not saved', refusal: result.refusal, back, base });
    }),
  );

  router.post(
    '/configurations/:id/vcs',
    ...form,
    deps.signedIn(async ({ req, user, base }) => {
      const vine = await useCases.vines.get(user, req.params.id);
      const result = await refused(() =>
        useCases.vcs.connect(user, vine.id, {
          provider: formField(req, 'provider'),
          repository: formField(req, 'repository')?.trim(),
          branch: formField(req, 'branch')?.trim(),
          paths: (formField(req, 'paths') ?? '')
            .split(',')
            .map((pattern) => pattern.trim())
            .filter((pattern) => pattern !== ''),
          auto_deploy: formField(req, 'auto_deploy') === 'on',
          pull_requests: formField(req, 'pull_requests') === 'on',
          fork_pull_requests: formField(req, 'fork_pull_requests'),
          webhook: formField(req, 'manual') === 'on' ? 'manual' : 'auto',
        }),
      );
      const back = { path: `/configurations/${vine.id}`, label: `Back to ${vine.name}` };
      if ('refusal' in result) {
        return refusedActionPage({ title: 'Not connected', refusal: result.refusal, back, base, labels: VCS_LABELS });
      }
      const connection = result.done;
      if (!connection.webhook_secret) return new Redirect(`/configurations/${vine.id}`);
      // A manual webhook's secret: this answer only (never stored in a page again, never cached).
      return {
        title: `Webhook of ${vine.name}`,
        section: 'vineyards',
        body: html`<h1>Create the webhook of ${vine.name}</h1>
<div class="notice" data-vcs-secret>
  <p><strong>Create the webhook at the provider now: the secret is shown only this once.</strong></p>
  <dl class="facts"><dt>Payload URL</dt><dd><code data-vcs-secret-url>${connection.webhook_url}</code></dd><dt>Secret</dt><dd><code data-vcs-secret-value>${connection.webhook_secret}</code></dd><dt>Content type</dt><dd><code>application/json</code></dd><dt>Events</dt><dd>pushes and pull (merge) requests</dd></dl>
  <p><a class="button" href="${base}${back.path}" data-vcs-done>Done</a></p>
</div>`,
      };
    }),
  );

  router.post(
    '/configurations/:id/vcs/disconnect',
    ...form,
    deps.signedIn(async ({ req, user, base }) => {
      const vine = await useCases.vines.get(user, req.params.id);
      const back = { path: `/configurations/${vine.id}`, label: `Back to ${vine.name}` };
      const ask = unconfirmed(req, base, {
        title: `Disconnect ${vine.name}`,
        question: `Disconnect ${vine.name} from its repository? Pushes and pull requests no longer plan it.`,
        button: 'Disconnect',
        back: back.path,
        section: 'vineyards',
      });
      if (ask) return ask;
      const result = await refused(() => useCases.vcs.disconnect(user, vine.id));
      if ('done' in result) return new Redirect(back.path);
      return refusedActionPage({ title: 'Not disconnected', refusal: result.refusal, back, base });
    }),
  );
}
