import { type Job, policyResultsOf } from '@trellis/core';
import { type Html, html } from '../html.js';

/** The job page's account of a plan's policy checks: each policy, its result and its messages. */
export function policyResultsSection(job: Job): Html | string {
  const results = policyResultsOf(job.execution_metadata);
  if (results.length === 0) return '';
  return html`<section class="card" id="policy-results">
  <h2>Policy checks</h2>
  <div class="table-scroll" role="region" aria-label="Policy checks" tabindex="0"><table class="policy-results">
  <thead><tr><th>Policy</th><th>Enforcement</th><th>Result</th><th>Messages</th></tr></thead>
  <tbody>
  ${results.map((result) => {
    const verdict = result.passed ? 'passed' : result.enforcement === 'mandatory' ? 'failed' : 'warning';
    return html`<tr data-policy-result="${result.policy_id}" data-passed="${String(result.passed)}">
    <td>${result.name} <span class="muted small">v${String(result.version)}</span></td>
    <td>${result.enforcement}</td>
    <td><span class="badge tone-${result.passed ? 'good' : result.enforcement === 'mandatory' ? 'bad' : 'waiting'}">${verdict}</span></td>
    <td>${result.messages.length === 0 ? html`<span class="muted">—</span>` : html`<ul class="policy-messages">${result.messages.map((message) => html`<li>${message}</li>`)}</ul>`}</td>
  </tr>`;
  })}
  </tbody>
  </table></div>
</section>`;
}
