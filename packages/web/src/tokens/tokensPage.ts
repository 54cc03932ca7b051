import {
  API_TOKEN_MAX_DAYS,
  API_TOKEN_MIN_DAYS,
  type ApiTokenView,
  type CreatedApiToken,
  ORG_ROLES,
  type PageResult,
} from '@trellis/core';
import { utc, when, NAME_HINT } from '../format.js';
import { type Html, html } from '../html.js';
import type { Page } from '../layout.js';
import { olderLink } from '../pages/olderLink.js';

export interface TokensPageInput {
  base: string;
  tokens: PageResult<ApiTokenView>;
  /** The organization whose tokens these are; null for the person's own. */
  orgId: string | null;
  now: Date;
  /** Just made: the token is on this page and nowhere else, ever. */
  created?: CreatedApiToken;
  /** Why the last create was refused, for the person. */
  error?: string;
  status?: number;
}

/** API tokens for automation: the list (never a secret), one form to make one, and revoking. */
export function tokensPage(input: TokensPageInput): Page {
  const { base, tokens, orgId, now, created, error } = input;
  const here = `${base}/tokens${orgId ? `?org_id=${encodeURIComponent(orgId)}` : ''}`;
  return {
    status: input.status ?? 200,
    title: 'API tokens',
    section: 'tokens',
    body: html`<h1>API tokens</h1>
${created ? createdNotice(created) : ''}
<section class="card">
  <h2>${orgId ? html`Tokens of organization <code>${orgId}</code>` : 'Your personal tokens'}</h2>
  <p class="muted">${
    orgId
      ? 'An organization token acts only within the organization, with its role, never above its creator’s.'
      : 'A personal token acts as you, in your records and your organizations’. Use it as TRELLIS_TOKEN or as Authorization: Bearer.'
  }</p>
  ${
    tokens.items.length === 0
      ? html`<p id="no-tokens">No tokens yet.</p>`
      : html`<div class="table-scroll" role="region" aria-label="API tokens" tabindex="0"><table class="tokens">
  <thead><tr><th>Name</th>${orgId ? html`<th>Role</th>` : ''}<th>Created</th><th>Expires</th><th>Last used</th><th>ID</th><th></th></tr></thead>
  <tbody>
  ${tokens.items.map((token) => tokenRow(base, token, orgId, now))}
  </tbody>
</table></div>`
  }
  ${olderLink(here, tokens)}
</section>
<section class="card">
  <h2>New token</h2>
  ${error ? html`<p class="error" id="token-error">${error}</p>` : ''}
  <form method="post" action="${base}/tokens" class="token-form">
    ${orgId ? html`<input type="hidden" name="org_id" value="${orgId}">` : ''}
    <p><label>Name <input name="name" id="token-name" required maxlength="100" pattern="[A-Za-z0-9][A-Za-z0-9._\\-]{0,99}" title="${NAME_HINT}" placeholder="ci-deploy"></label></p>
    ${
      orgId
        ? html`<p><label>Role <select name="role" id="token-role">${ORG_ROLES.map(
            (role) => html`<option value="${role}"${role === 'viewer' ? html` selected` : ''}>${role}</option>`,
          )}</select></label></p>`
        : ''
    }
    <p><label>Expires in days <input name="expires_in_days" id="token-days" type="number" min="${String(API_TOKEN_MIN_DAYS)}" max="${String(API_TOKEN_MAX_DAYS)}" placeholder="never"></label>
    <span class="muted small">${API_TOKEN_MIN_DAYS}–${API_TOKEN_MAX_DAYS}; empty: it never expires until revoked.</span></p>
    <p class="actions"><button type="submit" class="button primary" id="create-token">Create token</button></p>
  </form>
</section>`,
  };
}

function createdNotice(created: CreatedApiToken): Html {
  return html`<section class="card notice" id="created-token">
  <h2>Token ${created.name} created</h2>
  <p><strong>Copy it now: it is shown only this once.</strong> Trellis keeps only its hash.</p>
  <div class="code-box">
    <output id="new-token" class="verification-code" aria-label="New API token">${created.token}</output>
    <button type="button" class="button" data-copy="${created.token}">Copy</button>
  </div>
  <p class="muted small">${created.expires_at ? `Expires ${utc(created.expires_at)}.` : 'Never expires; revoke it when it is no longer needed.'}</p>
</section>`;
}

function tokenRow(base: string, token: ApiTokenView, orgId: string | null, now: Date): Html {
  return html`<tr id="token-${token.id}">
    <td>${token.name}</td>
    ${orgId ? html`<td>${token.role ?? ''}</td>` : ''}
    <td>${when(token.created_at, now)}</td>
    <td>${token.expires_at ? html`<time datetime="${token.expires_at}">${utc(token.expires_at)}</time>` : html`<span class="muted">never</span>`}</td>
    <td>${when(token.last_used_at, now)}</td>
    <td><code>${token.id}</code></td>
    <td><form method="post" action="${base}/tokens/${token.id}/revoke">
      ${orgId ? html`<input type="hidden" name="org_id" value="${orgId}">` : ''}
      <button type="submit" class="button danger" data-revoke="${token.id}">Revoke</button>
    </form></td>
  </tr>`;
}
