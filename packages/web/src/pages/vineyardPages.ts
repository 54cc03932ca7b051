import type { JobSummary, PageResult, VineSummary, VineView, VineyardSummary, VineyardView } from '@trellis/core';
import { badge, driftBadge, jobTypeLabel, when } from '../format.js';
import { externalUrl, type Html, html } from '../html.js';
import type { Page } from '../layout.js';
import { filteredOwner, type Standing } from '../standing.js';
import { olderLink } from './olderLink.js';
import { vineyardManageSection } from '../vineyardEdits/vineyardEditPages.js';

/** The dashboard: every vineyard with its vines and their status. */
export function vineyardsPage(input: {
  base: string;
  vineyards: PageResult<VineyardSummary>;
  standing: Standing;
  /** `?org_id=` as given: '' for everything the person sees. */
  orgFilter: string;
  now: Date;
}): Page {
  const { base, now, standing, orgFilter } = input;
  const vineyards = [...input.vineyards.items].sort(byName);
  const owner = filteredOwner(standing, orgFilter);
  const org = owner === null ? null : standing.org(owner);
  // Everyone creates vineyards of their own; in an organization, its admins and owners.
  const mayCreate = owner === null || standing.may(owner, 'vineyards.manage');
  return {
    title: 'Vineyards',
    section: 'vineyards',
    orgFilter: { path: '/vineyards', value: orgFilter },
    body: html`<div class="title-row"><h1>Vineyards${org ? html` <span class="muted small">of ${org.name}</span>` : ''}</h1>
${mayCreate ? html`<a class="button primary" href="${base}/vineyards/new${org ? `?org_id=${org.id}` : ''}" data-new-vineyard>New vineyard</a>` : ''}</div>
${
  vineyards.length === 0
    ? mayCreate
      ? html`<section class="card empty">
  <p>No vineyards yet. Create one with the button above, or from the command line:</p>
  <pre class="command">trellis vineyards create production${org ? ` --org ${org.name}` : ''}</pre>
</section>`
      : html`<section class="card empty"><p>No vineyards in ${org?.name ?? 'this organization'} yet; its admins create them.</p></section>`
    : vineyards.map(
        (vineyard) => html`<section class="card vineyard">
  <h2><a href="${base}/vineyards/${vineyard.id}">${vineyard.name}</a> ${ownerTag(standing, vineyard.owner_id)}<span class="muted small">${vineyard.vines.length} ${vineyard.vines.length === 1 ? 'vine' : 'vines'}</span></h2>
  ${vineyard.vines.length === 0 ? html`<p class="muted">No vines in this vineyard yet.</p>` : vineTable(base, vineyard.name, vineyard.vines, now)}
</section>`,
      )
}
${olderLink(`${base}/vineyards`, input.vineyards, orgFilter ? { org_id: orgFilter } : {})}`,
  };
}

/** The organization a record belongs to, as a small tag; nothing for the person's own. */
export function ownerTag(standing: Standing, ownerId: string): Html | string {
  const name = standing.ownerName(ownerId);
  return name ? html`<span class="badge tone-neutral" data-owner="${name}">${name}</span> ` : '';
}

function byName(a: { name: string }, b: { name: string }): number {
  return a.name.localeCompare(b.name);
}

function vineTable(base: string, vineyardName: string, vines: VineSummary[], now: Date): Html {
  return html`<div class="table-scroll" role="region" aria-label="Vines of ${vineyardName}" tabindex="0"><table>
  <thead><tr><th>Vine</th><th>Project</th><th>Status</th><th>Engine</th><th>Updated</th></tr></thead>
  <tbody>
  ${[...vines].sort(byName).map(
    (vine) => html`<tr>
    <td><a href="${base}/configurations/${vine.id}">${vine.name}</a></td>
    <td>${vine.project_name}</td>
    <td>${badge(vine.status)} ${driftBadge(vine.drift)}</td>
    <td>${vine.engine.name}${vine.engine.version ? html` ${vine.engine.version}` : ''}</td>
    <td>${when(vine.updated_at, now)}</td>
  </tr>`,
  )}
  </tbody>
</table></div>`;
}

/** One vineyard: its vines with their cluster endpoint and Argo CD (columns only when a vine has them) and last job. */
export function vineyardPage(input: {
  base: string;
  vineyard: VineyardView;
  vines: VineView[];
  /** The newest job of each vine that has one. */
  lastJobs: ReadonlyMap<string, JobSummary>;
  standing: Standing;
  now: Date;
}): Page {
  const { base, vineyard, vines, lastJobs, now, standing } = input;
  const org = standing.org(vineyard.owner_id);
  const lastJobOf = (vineId: string) => lastJobs.get(vineId);
  const withEndpoint = vines.some((vine) => vine.components.cluster?.endpoint);
  const withArgocd = vines.some((vine) => vine.components.argocd);
  const mayManage = standing.may(vineyard.owner_id, 'vineyards.manage');
  return {
    title: vineyard.name,
    section: 'vineyards',
    body: html`<p class="breadcrumbs"><a href="${base}/vineyards">Vineyards</a> /</p>
<div class="title-row"><h1>${vineyard.name}</h1>${ownerTag(standing, vineyard.owner_id)}
${mayManage ? html`<a class="button primary" href="${base}/vineyards/${vineyard.id}/configurations/new" data-new-vine>New configuration</a>` : ''}</div>
<p class="muted">Created ${when(vineyard.created_at, now)} · <code>${vineyard.id}</code></p>
${
  vines.length === 0
    ? mayManage
      ? html`<section class="card empty">
  <p>No vines yet. Create one with the button above, or from the command line:</p>
  <pre class="command">trellis configs create web --vineyard ${vineyard.name} --dir ./infra</pre>
</section>`
      : html`<section class="card empty"><p>No vines yet; the admins of ${org?.name ?? 'this organization'} create them.</p></section>`
    : html`<section class="card">
<div class="table-scroll" role="region" aria-label="Vines" tabindex="0"><table>
  <thead><tr><th>Vine</th><th>Status</th>${withEndpoint ? html`<th>Cluster endpoint</th>` : ''}${withArgocd ? html`<th>Argo CD</th>` : ''}<th>Last job</th></tr></thead>
  <tbody>
  ${[...vines].sort(byName).map((vine) => {
    const last = lastJobOf(vine.id);
    const endpoint = vine.components.cluster?.endpoint ?? null;
    const argocd = externalUrl(vine.components.argocd?.url);
    return html`<tr>
    <td><a href="${base}/configurations/${vine.id}">${vine.name}</a></td>
    <td>${badge(vine.status)} ${driftBadge(vine.drift)}</td>
    ${withEndpoint ? html`<td>${endpoint ? html`<code>${endpoint}</code>` : html`<span class="muted">—</span>`}</td>` : ''}
    ${withArgocd ? html`<td>${argocd ? html`<a href="${argocd}" rel="noopener noreferrer" target="_blank">Open</a>` : html`<span class="muted">—</span>`}</td>` : ''}
    <td>${last ? html`<a href="${base}/jobs/${last.id}">${jobTypeLabel(last)}</a> ${badge(last.status)} ${when(last.created_at, now)}` : html`<span class="muted">none</span>`}</td>
  </tr>`;
  })}
  </tbody>
</table></div>
</section>`
}
${mayManage ? vineyardManageSection(base, vineyard) : ''}`,
  };
}
