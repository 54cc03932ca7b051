import { describeVcsFeedback, type JsonObject, type VcsFeedbackView } from '@trellis/core';
import { type Html, html } from '../html.js';

/** The job page's account of what a git-driven job told its git provider (null: not a git-driven job). */
export function vcsFeedbackSection(items: readonly VcsFeedbackView[] | null): Html | string {
  if (items === null) return '';
  const described = describeVcsFeedback(items);
  return html`<section class="card" id="vcs-feedback">
  <h2>Git provider</h2>
  ${
    described.length === 0
      ? html`<p class="muted">Nothing to send.</p>`
      : html`<dl class="facts">${described.map(
          ({ label, text, ok }) =>
            html`<dt>${label}</dt><dd data-vcs-feedback="${ok ? 'ok' : 'problem'}"><span class="badge tone-${ok ? 'good' : 'bad'}">${text}</span></dd>`,
        )}</dl>`
  }
</section>`;
}

/** The resources a plan changes, as the agent reported them. */
export function resourceChangesSection(metadata: JsonObject): Html | string {
  const changes = Array.isArray(metadata.resource_changes) ? metadata.resource_changes : [];
  const rows = changes.flatMap((change) => {
    if (typeof change !== 'object' || change === null || Array.isArray(change)) return [];
    const { address, actions } = change as { address?: unknown; actions?: unknown };
    return typeof address === 'string' && Array.isArray(actions) ? [{ address, actions: actions.join('/') }] : [];
  });
  if (rows.length === 0) return '';
  const omitted = typeof metadata.resource_changes_omitted === 'number' ? metadata.resource_changes_omitted : 0;
  return html`<section class="card" id="resource-changes">
  <h2>Changes</h2>
  <table><thead><tr><th>Action</th><th>Resource</th></tr></thead><tbody>
  ${rows.map((row) => html`<tr data-resource-change="${row.address}"><td>${row.actions}</td><td><code>${row.address}</code></td></tr>`)}
  </tbody></table>
  ${omitted > 0 ? html`<p class="muted">…and ${String(omitted)} more.</p>` : ''}
</section>`;
}
