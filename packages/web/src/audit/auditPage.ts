import { AUDIT_ACTIONS, type AuditEntry, type PageResult } from '@trellis/core';
import { when } from '../format.js';
import { type Html, html } from '../html.js';
import type { Page } from '../layout.js';
import type { OrgEntry } from '../standing.js';
import { olderLink } from '../pages/olderLink.js';

/** The query filters `/audit` accepts, as given (core checks them). */
export interface AuditFilters {
  /** An organization's id; absent: the person's own log. */
  org_id?: string;
  action?: string;
  actor?: string;
  target_id?: string;
}

export interface AuditPageInput {
  base: string;
  entries: PageResult<AuditEntry> | null;
  filters: AuditFilters;
  /** The person's organizations whose log they may read (admins and owners). */
  orgs: readonly OrgEntry[];
  now: Date;
  /** Why the log cannot be shown (a role too low), for the person. */
  error?: string;
  status?: number;
}

/** The audit log: the person's own or an organization's, with filters and pages. */
export function auditPage(input: AuditPageInput): Page {
  const { base, entries, filters, orgs, now, error } = input;
  const orgName = orgs.find((org) => org.id === filters.org_id)?.name;
  const option = (value: string, label: string, current: string | undefined) =>
    html`<option value="${value}"${value === (current ?? '') ? html` selected` : ''}>${label}</option>`;
  return {
    status: input.status ?? 200,
    title: 'Audit log',
    section: 'audit',
    body: html`<h1>Audit log</h1>
<section class="card">
  <form method="get" action="${base}/audit" class="audit-filters" id="audit-filters">
    <label>Log <select name="org_id" id="audit-org">
      ${option('', 'Yours', filters.org_id)}
      ${orgs.map((org) => option(org.id, org.name, filters.org_id))}
    </select></label>
    <label>Action <select name="action" id="audit-action">
      ${option('', 'Any', filters.action)}
      ${AUDIT_ACTIONS.map((action) => option(action, action, filters.action))}
    </select></label>
    <label>Actor <input name="actor" id="audit-actor" value="${filters.actor ?? ''}" placeholder="email or id" maxlength="320"></label>
    <label>Target <input name="target_id" id="audit-target" value="${filters.target_id ?? ''}" placeholder="record id"></label>
    <button type="submit" class="button" id="audit-filter">Filter</button>
  </form>
</section>
<section class="card">
  <h2>${orgName ? html`Log of ${orgName}` : 'Your log'}</h2>
  ${error ? html`<p class="error" id="audit-error">${error}</p>` : ''}
  ${
    entries === null
      ? ''
      : entries.items.length === 0
        ? html`<p class="muted" id="no-entries">No entries.</p>`
        : html`<div class="table-scroll" role="region" aria-label="Audit log entries" tabindex="0"><table class="audit" id="audit-entries">
  <thead><tr><th>When</th><th>Actor</th><th>Action</th><th>Target</th><th>IP</th><th>Request</th><th>Details</th></tr></thead>
  <tbody>
  ${entries.items.map((entry) => entryRow(entry, now))}
  </tbody>
</table></div>`
  }
  ${entries === null ? '' : olderLink(`${base}/audit`, entries, { ...filters })}
</section>`,
  };
}

function entryRow(entry: AuditEntry, now: Date): Html {
  const details = Object.entries(entry.details)
    .map(([name, value]) => `${name}=${value === null ? '-' : String(value)}`)
    .join(' ');
  return html`<tr data-audit-entry="${entry.id}">
    <td>${when(entry.at, now)}</td>
    <td data-actor>${actorLabel(entry)}</td>
    <td data-action><code>${entry.action}</code></td>
    <td data-target>${entry.target.type} <code>${entry.target.id}</code></td>
    <td data-ip>${entry.ip ?? '-'}</td>
    <td data-request><code>${entry.request_id ?? '-'}</code></td>
    <td class="small">${details}</td>
  </tr>`;
}

function actorLabel(entry: AuditEntry): string {
  const { actor } = entry;
  switch (actor.type) {
    case 'user':
      return actor.email ?? actor.id ?? 'user';
    case 'token':
      return `API token of ${actor.email ?? '?'}`;
    case 'worker':
      return `agent ${actor.id ?? ''}`;
    case 'system':
      return 'Trellis';
  }
}
