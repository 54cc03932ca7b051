import type { PageResult, PolicyDetail, PolicyView } from '@trellis/core';
import { when, NAME_HINT } from '../format.js';
import { type Html, html } from '../html.js';
import type { Page } from '../layout.js';
import { olderLink } from '../pages/olderLink.js';

export interface PoliciesPageInput {
  base: string;
  policies: PageResult<PolicyView>;
  /** The organization the list is narrowed to (and a new one is made for); null for everything. */
  orgId: string | null;
  now: Date;
  /** What the form held when the server refused it, to fix and send again. */
  form?: { name?: string; enforcement?: string; module?: string; vineyard_id?: string };
  error?: string;
  status?: number;
  /** The names of the vineyards the policies apply to, by id (else the id is shown). */
  vineyards?: ReadonlyMap<string, string>;
}

const EXAMPLE = `package trellis.no_public_buckets

deny contains msg if {
  some rc in input.resource_changes
  rc.type == "aws_s3_bucket_acl"
  rc.change.after.acl in {"public-read", "public-read-write"}
  msg := sprintf("%s: a public ACL is not allowed", [rc.address])
}
`;

/** Policies: the list, and a form to make one (a Rego module in a textarea). */
export function policiesPage(input: PoliciesPageInput): Page {
  const { base, policies, orgId, now, form, error } = input;
  const here = `${base}/policies${orgId ? `?org_id=${encodeURIComponent(orgId)}` : ''}`;
  return {
    status: input.status ?? 200,
    title: 'Policies',
    section: 'policies',
    body: html`<h1>Policies</h1>
<p class="muted">Rego modules the agents check every plan with (Open Policy Agent). A failed <strong>mandatory</strong> policy blocks the deploy of the plan unless an admin overrides it; an <strong>advisory</strong> one is a warning.</p>
<section class="card">
  <h2>${orgId ? html`Policies of organization <code>${orgId}</code>` : 'Your policies and your organizations’'}</h2>
  ${
    policies.items.length === 0
      ? html`<p id="no-policies">No policies yet.</p>`
      : html`<div class="table-scroll" role="region" aria-label="Policies" tabindex="0"><table class="policies">
  <thead><tr><th>Name</th><th>Enforcement</th><th>Version</th><th>Applies to</th><th>Updated</th></tr></thead>
  <tbody>
  ${policies.items.map(
    (p) => html`<tr id="policy-${p.id}">
    <td><a href="${base}/policies/${p.id}">${p.name}</a></td>
    <td>${p.enforcement}</td>
    <td>${String(p.version)}</td>
    <td>${p.vineyard_id ? html`vineyard <a href="${base}/vineyards/${p.vineyard_id}">${vineyardLabel(p.vineyard_id, input.vineyards)}</a>` : 'every vineyard'}</td>
    <td>${when(p.updated_at, now)}</td>
  </tr>`,
  )}
  </tbody>
</table></div>`
  }
  ${olderLink(here, policies)}
</section>
<section class="card">
  <h2>New policy</h2>
  ${error ? html`<p class="error" id="policy-error">${error}</p>` : ''}
  <form method="post" action="${base}/policies" class="policy-form">
    ${orgId ? html`<input type="hidden" name="org_id" value="${orgId}">` : ''}
    <p><label>Name <input name="name" id="policy-name" required maxlength="100" pattern="[A-Za-z0-9][A-Za-z0-9._\\-]{0,99}" title="${NAME_HINT}" placeholder="no-public-buckets" value="${form?.name ?? ''}"></label></p>
    <p><label>Enforcement <select name="enforcement" id="policy-enforcement">
      <option value="mandatory"${form?.enforcement === 'advisory' ? '' : html` selected`}>mandatory (blocks the deploy)</option>
      <option value="advisory"${form?.enforcement === 'advisory' ? html` selected` : ''}>advisory (a warning)</option>
    </select></label></p>
    <p><label>Vineyard id (empty: every vineyard) <input name="vineyard_id" id="policy-vineyard" maxlength="36" value="${form?.vineyard_id ?? ''}"></label></p>
    <p><label>Rego module<br><textarea name="module" id="policy-module" rows="14" cols="80" required spellcheck="false" class="code">${form?.module ?? EXAMPLE}</textarea></label></p>
    <p class="actions"><button type="submit" class="button primary" id="create-policy">Create policy</button></p>
  </form>
</section>`,
  };
}

export interface PolicyPageInput {
  base: string;
  policy: PolicyDetail;
  /** Whether the person may change and delete it (`policies.manage`). */
  mayManage: boolean;
  now: Date;
  error?: string;
  /** The module the refused update held. */
  module?: string;
  status?: number;
  /** The name of the vineyard the policy applies to, by id (else the id is shown). */
  vineyards?: ReadonlyMap<string, string>;
}

/** One policy: its current module, a form for a new version, and every version. */
export function policyPage(input: PolicyPageInput): Page {
  const { base, policy: p, now, error } = input;
  return {
    status: input.status ?? 200,
    title: `Policy ${p.name}`,
    section: 'policies',
    body: html`<p class="breadcrumbs"><a href="${base}/policies">Policies</a> /</p>
<h1>Policy ${p.name} <span class="muted small">v${String(p.version)}</span></h1>
<section class="card">
  <dl class="facts">
    <dt>Enforcement</dt><dd id="policy-enforcement-value">${p.enforcement}</dd>
    <dt>Applies to</dt><dd>${p.vineyard_id ? html`vineyard <a href="${base}/vineyards/${p.vineyard_id}">${vineyardLabel(p.vineyard_id, input.vineyards)}</a>` : 'every vineyard of its owner'}</dd>
    <dt>Owner</dt><dd>${p.org_id ? html`organization <code>${p.org_id}</code>` : 'you'}</dd>
    <dt>Updated</dt><dd>${when(p.updated_at, now)}</dd>
    <dt>ID</dt><dd><code>${p.id}</code></dd>
  </dl>
</section>
${
  input.mayManage
    ? html`<section class="card">
  <h2>New version</h2>
  ${error ? html`<p class="error" id="policy-error">${error}</p>` : ''}
  <form method="post" action="${base}/policies/${p.id}" class="policy-form">
    <p><label>Enforcement <select name="enforcement" id="policy-enforcement">
      <option value="mandatory"${p.enforcement === 'mandatory' ? html` selected` : ''}>mandatory</option>
      <option value="advisory"${p.enforcement === 'advisory' ? html` selected` : ''}>advisory</option>
    </select></label></p>
    <p><label>Rego module<br><textarea name="module" id="policy-module" rows="14" cols="80" required spellcheck="false" class="code">${input.module ?? p.module}</textarea></label></p>
    <p class="actions"><button type="submit" class="button primary" id="update-policy">Save as version ${String(p.version + 1)}</button></p>
  </form>
  <form method="post" action="${base}/policies/${p.id}/delete" class="inline"><button type="submit" class="button danger" id="delete-policy">Delete policy</button></form>
</section>`
    : ''
}
<section class="card">
  <h2>Versions</h2>
  ${[...p.versions].reverse().map(
    (
      v,
    ): Html => html`<details class="policy-version" id="version-${String(v.version)}"${v.version === p.version ? html` open` : ''}>
    <summary>Version ${String(v.version)} · ${v.enforcement} · ${when(v.created_at, now)}</summary>
    <pre class="code">${v.module}</pre>
  </details>`,
  )}
</section>`,
  };
}

/** A vineyard by its name when known, else by its id. */
export function vineyardLabel(id: string, names: ReadonlyMap<string, string> | undefined): Html {
  const name = names?.get(id);
  return name ? html`<span data-vineyard-name>${name}</span>` : html`<code>${id}</code>`;
}
