import { describeVcsFeedback, type ExecutionMetadata, type VcsFeedbackView } from '@trellis/core';
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
export function resourceChangesSection(metadata: ExecutionMetadata): Html | string {
  const rows = (metadata.resource_changes ?? []).map(({ address, actions }) => ({
    address,
    actions: actions.join('/'),
  }));
  if (rows.length === 0) return '';
  const omitted = metadata.resource_changes_omitted ?? 0;
  return html`<section class="card" id="resource-changes">
  <h2>Changes</h2>
  <div class="table-scroll" role="region" aria-label="Changes" tabindex="0"><table><thead><tr><th>Action</th><th>Resource</th></tr></thead><tbody>
  ${rows.map((row) => html`<tr data-resource-change="${row.address}"><td>${row.actions}</td><td><code>${row.address}</code></td></tr>`)}
  </tbody></table></div>
  ${omitted > 0 ? html`<p class="muted">…and ${String(omitted)} more.</p>` : ''}
</section>`;
}
