import {
  FLEET_DRIFT,
  type FleetCounts,
  type FleetVineSummary,
  PLAN_POLICY_RESULTS,
  type PageResult,
  VINE_STATUSES,
} from '@trellis/core';
import { badge, driftBadge, when } from '../format.js';
import { type Html, html } from '../html.js';
import type { Page } from '../layout.js';
import { olderLink } from '../pages/olderLink.js';
import type { Standing } from '../standing.js';

/** The query filters `/fleet` accepts, as given (core checks them); empty fields are no filter. */
export interface FleetFilters {
  /** `''` (everything), `personal`, or an organization's id: the switcher's filter. */
  org_id?: string;
  status?: string;
  drift?: string;
  policy?: string;
  tag?: string;
  changed_since?: string;
  changed_before?: string;
}

export const FLEET_FILTER_NAMES = [
  'org_id',
  'status',
  'drift',
  'policy',
  'tag',
  'changed_since',
  'changed_before',
] as const satisfies readonly (keyof FleetFilters)[];

const DRIFT_LABELS: Record<(typeof FLEET_DRIFT)[number], string> = {
  drifted: 'drifted',
  in_sync: 'in sync',
  unknown: 'unknown',
  never_checked: 'never checked',
};
const POLICY_LABELS: Record<(typeof PLAN_POLICY_RESULTS)[number], string> = {
  passed: 'passed',
  failed: 'failed',
  none: 'none',
};

export interface FleetPageInput {
  base: string;
  filters: FleetFilters;
  /** Null when the filter was refused (`error` says why). */
  vines: PageResult<FleetVineSummary> | null;
  counts: FleetCounts | null;
  standing: Standing;
  now: Date;
  error?: string;
  status?: number;
  /** The stream the list and its counts follow (`GET /live/fleet`); null or absent: a plain page. */
  live?: string | null;
}

/**
 * The fleet (issue 29): every configuration the person may read, across vineyards and
 * organizations. A plain GET form filters it (no script needed); the counts at the top are links
 * that apply their filter; the table scrolls inside its own labelled region on a phone.
 */
export function fleetPage(input: FleetPageInput): Page {
  const { base, filters, vines, counts, standing, now, error } = input;
  const href = (changes: Partial<FleetFilters>) => fleetHref(base, { ...filters, ...changes });
  const option = (value: string, label: string, current: string | undefined) =>
    html`<option value="${value}"${value === (current ?? '') ? html` selected` : ''}>${label}</option>`;
  return {
    status: input.status ?? 200,
    title: 'Fleet',
    section: 'fleet',
    orgFilter: { path: '/fleet', value: filters.org_id ?? '' },
    body: html`<h1>Fleet</h1>
<p class="muted">Every configuration you can see, across vineyards and organizations.</p>
${counts ? countsCard(counts, filters, href, false) : ''}
<section class="card">
  <h2 id="fleet-filter-heading">Filter</h2>
  <form method="get" action="${base}/fleet" class="fleet-filters" id="fleet-filters" aria-labelledby="fleet-filter-heading">
    ${filters.org_id ? html`<input type="hidden" name="org_id" value="${filters.org_id}">` : ''}
    <label>Status <select name="status" id="fleet-status">
      ${option('', 'Any', filters.status)}
      ${VINE_STATUSES.map((status) => option(status, status, filters.status))}
    </select></label>
    <label>Drift <select name="drift" id="fleet-drift">
      ${option('', 'Any', filters.drift)}
      ${FLEET_DRIFT.map((drift) => option(drift, DRIFT_LABELS[drift], filters.drift))}
    </select></label>
    <label>Policy <select name="policy" id="fleet-policy">
      ${option('', 'Any', filters.policy)}
      ${PLAN_POLICY_RESULTS.map((policy) => option(policy, POLICY_LABELS[policy], filters.policy))}
    </select></label>
    <label>Tag <input name="tag" id="fleet-tag" value="${filters.tag ?? ''}" maxlength="255" autocomplete="off"></label>
    <label>Changed since <input type="date" name="changed_since" id="fleet-changed-since" value="${dateValue(filters.changed_since)}"></label>
    <label>Changed before <input type="date" name="changed_before" id="fleet-changed-before" value="${dateValue(filters.changed_before)}"></label>
    <div class="fleet-filter-actions">
      <button type="submit" class="button" id="fleet-filter">Filter</button>
      <a href="${fleetHref(base, filters.org_id ? { org_id: filters.org_id } : {})}" id="fleet-clear">Clear</a>
    </div>
  </form>
</section>
<section class="card">
  <h2>Configurations</h2>
  ${error ? html`<p class="error" role="alert" id="fleet-error">${error}</p>` : ''}
  ${
    vines === null
      ? ''
      : input.live
        ? html`<div id="fleet-list" hx-ext="sse" sse-connect="${input.live}" sse-swap="rows">${fleetList(base, vines.items, standing, now)}</div>`
        : html`<div id="fleet-list">${fleetList(base, vines.items, standing, now)}</div>`
  }
  ${vines === null ? '' : olderLink(`${base}/fleet`, vines, withoutEmpty(filters))}
</section>`,
  };
}

/**
 * The fleet's live part (`GET /live/fleet`): its configurations and, out of band, its counts,
 * rendered by the page's own templates, sent whole when a job changes a vine the person sees.
 */
export function fleetLive(input: {
  base: string;
  filters: FleetFilters;
  vines: readonly FleetVineSummary[];
  counts: FleetCounts;
  standing: Standing;
  now: Date;
}): Html {
  const { base, filters, vines, counts, standing, now } = input;
  const href = (changes: Partial<FleetFilters>) => fleetHref(base, { ...filters, ...changes });
  return html`${fleetList(base, vines, standing, now)}
${countsCard(counts, filters, href, true)}`;
}

function fleetList(base: string, vines: readonly FleetVineSummary[], standing: Standing, now: Date): Html {
  return vines.length === 0
    ? html`<p class="muted" id="fleet-empty">No configuration matches.</p>`
    : fleetTable(base, vines, standing, now);
}

/** `oob`: sent live beside the list, replacing the page's counts. */
function countsCard(
  counts: FleetCounts,
  filters: FleetFilters,
  href: (changes: Partial<FleetFilters>) => string,
  oob: boolean,
): Html {
  const group = <T extends string>(
    name: 'status' | 'drift' | 'policy',
    title: string,
    values: readonly T[],
    byValue: Record<T, number>,
    label: (value: T) => string,
  ) => html`<div class="fleet-count-group">
    <h3 id="fleet-counts-${name}">${title}</h3>
    <ul aria-labelledby="fleet-counts-${name}">
      ${values.map((value) => {
        const current = filters[name] === value;
        return html`<li><a href="${href({ [name]: current ? '' : value })}" data-count="${name}:${value}"${current ? html` aria-current="true"` : ''}><span class="fleet-count-label">${label(value)}</span> <span class="fleet-count">${byValue[value]}</span></a></li>`;
      })}
    </ul>
  </div>`;
  return html`<section class="card fleet-counts" id="fleet-counts" aria-labelledby="fleet-counts-heading"${oob ? html` hx-swap-oob="true"` : ''}>
  <h2 id="fleet-counts-heading"><span id="fleet-total">${counts.total}</span> ${counts.total === 1 ? 'configuration' : 'configurations'}</h2>
  <div class="fleet-count-groups">
    ${group('status', 'Status', VINE_STATUSES, counts.status, (value) => value)}
    ${group('drift', 'Drift', FLEET_DRIFT, counts.drift, (value) => DRIFT_LABELS[value])}
    ${group('policy', 'Policy', PLAN_POLICY_RESULTS, counts.policy, (value) => POLICY_LABELS[value])}
  </div>
</section>`;
}

function fleetTable(base: string, vines: readonly FleetVineSummary[], standing: Standing, now: Date): Html {
  return html`<div class="table-scroll" role="region" aria-label="Configurations of the fleet" tabindex="0"><table class="fleet" id="fleet-table">
  <thead><tr><th>Name</th><th>Vineyard</th><th>Organization</th><th>Status</th><th>Drift</th><th>Policy</th><th>Tags</th><th>Last change</th></tr></thead>
  <tbody>
  ${vines.map(
    (vine) => html`<tr data-fleet-vine="${vine.name}">
    <td><a href="${base}/configurations/${vine.id}">${vine.name}</a></td>
    <td><a href="${base}/vineyards/${vine.vineyard_id}">${vine.vineyard_name ?? vine.vineyard_id}</a></td>
    <td>${standing.ownerName(vine.owner_id) ?? html`<span class="muted">Personal</span>`}</td>
    <td>${badge(vine.status)}</td>
    <td data-drift-cell>${vine.drift ? driftBadge(vine.drift) : html`<span class="muted">never checked</span>`}</td>
    <td data-policy="${vine.policy}">${policyBadge(vine.policy)}</td>
    <td>${vine.tags.length === 0 ? html`<span class="muted">-</span>` : vine.tags.map((tag) => html`<span class="tag">${tag}</span> `)}</td>
    <td>${when(vine.updated_at, now)}</td>
  </tr>`,
  )}
  </tbody>
</table></div>`;
}

function policyBadge(policy: FleetVineSummary['policy']): Html {
  if (policy === 'none') return html`<span class="muted">none</span>`;
  return html`<span class="badge tone-${policy === 'passed' ? 'good' : 'bad'}">${policy}</span>`;
}

/** A date input shows the day of an instant the filter was given as. */
function dateValue(value: string | undefined): string {
  if (value === undefined) return '';
  return /^\d{4}-\d{2}-\d{2}/.test(value) ? value.slice(0, 10) : '';
}

function withoutEmpty(filters: FleetFilters): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(filters).filter(([, value]) => value !== undefined && value !== ''));
}

/** `/fleet` with these filters (empty ones left out). */
export function fleetHref(base: string, filters: FleetFilters): string {
  const query = new URLSearchParams(withoutEmpty(filters) as Record<string, string>).toString();
  return query === '' ? `${base}/fleet` : `${base}/fleet?${query}`;
}
