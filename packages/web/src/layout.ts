import type { UserActor } from '@trellis/core';
import { type Html, html } from './html.js';
import type { Standing } from './standing.js';

export type Section =
  | 'fleet'
  | 'vineyards'
  | 'jobs'
  | 'queue'
  | 'workers'
  | 'orgs'
  | 'tokens'
  | 'notifications'
  | 'policies'
  | 'registry'
  | 'audit';

/** What a page handler returns; the router wraps it in the layout. */
export interface Page {
  status?: number;
  title: string;
  /** The navigation entry to highlight. */
  section?: Section;
  /**
   * A list page that the organization switcher filters (`?org_id=`), and the filter it shows with;
   * on other pages the switcher leads to the vineyards.
   */
  orgFilter?: { path: string; value: string };
  body: Html;
}

export interface LayoutContext {
  /** Where the web interface is mounted ('' at the root, '/trellis' under a prefix). */
  base: string;
  user: UserActor | null;
  /** The signed-in person's organizations; the switcher shows when there is one. */
  standing?: Standing | null;
  assets: { css: string; js: string; htmx: string; sse: string; icon: string };
}

const NAVIGATION: readonly { section: Section; label: string; path: string }[] = [
  { section: 'fleet', label: 'Fleet', path: '/fleet' },
  { section: 'vineyards', label: 'Vineyards', path: '/vineyards' },
  { section: 'jobs', label: 'Jobs', path: '/jobs' },
  { section: 'queue', label: 'Queue', path: '/queue' },
  { section: 'workers', label: 'Workers', path: '/workers' },
  { section: 'orgs', label: 'Organizations', path: '/orgs' },
  { section: 'tokens', label: 'API tokens', path: '/tokens' },
  { section: 'notifications', label: 'Notifications', path: '/notifications' },
  { section: 'policies', label: 'Policies', path: '/policies' },
  { section: 'registry', label: 'Registry', path: '/registry' },
  { section: 'audit', label: 'Audit log', path: '/audit' },
];

/**
 * "All", "Personal" and each organization: which owner's records the list pages show. A plain
 * GET form (the script submits it on change), so it works without the script too.
 */
function orgSwitcher(base: string, standing: Standing, filter: Page['orgFilter']): Html {
  const current = filter?.value ?? '';
  const option = (value: string, label: string) =>
    html`<option value="${value}"${value === current ? html` selected` : ''}>${label}</option>`;
  return html`<form method="get" action="${base}${filter?.path ?? '/vineyards'}" class="org-switcher" data-org-switcher>
    <label for="org-switcher" class="visually-hidden">Show the records of</label>
    <select id="org-switcher" name="org_id">
      ${option('', 'All')}
      ${option('personal', 'Personal')}
      ${[...standing.orgs].sort((a, b) => a.name.localeCompare(b.name)).map((org) => option(org.id, org.name))}
    </select>
    <button type="submit" class="button quiet" data-org-switch-go>Show</button>
  </form>`;
}

/**
 * htmx (issue 29) without eval, inline scripts or inline styles (the CSP allows none). A form it
 * sends in place shows a refusal (4xx) where the form keeps a `[data-form-slot]`: the refused page's
 * `[data-action-error]`, as core said it.
 */
const HTMX_CONFIG = JSON.stringify({
  includeIndicatorStyles: false,
  allowEval: false,
  allowScriptTags: false,
  responseHandling: [
    { code: '204', swap: false },
    { code: '[23]..', swap: true },
    {
      code: '[4]..',
      swap: true,
      error: true,
      select: '[data-action-error]',
      target: 'find [data-form-slot]',
      swapOverride: 'innerHTML',
    },
    { code: '...', swap: false, error: true },
  ],
});

export function layout(page: Page, context: LayoutContext): Html {
  const { base, user, assets, standing } = context;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title} · Trellis</title>
<link rel="icon" href="${assets.icon}" type="image/svg+xml">
<link rel="stylesheet" href="${assets.css}">
<meta name="htmx-config" content='${HTMX_CONFIG}'>
<script src="${assets.htmx}" defer></script>
<script src="${assets.sse}" defer></script>
<script src="${assets.js}" defer></script>
</head>
<body data-base="${base}">
<a class="skip-link" href="#main">Skip to content</a>
<header class="topbar">
  <a class="brand" href="${base}/"><span class="brand-mark" aria-hidden="true"></span>Trellis</a>
  ${
    user
      ? html`<nav aria-label="Main">
    ${NAVIGATION.map(
      (item) =>
        html`<a href="${base}${item.path}"${item.section === page.section ? html` aria-current="page"` : ''}>${item.label}</a>`,
    )}
  </nav>
  ${standing && standing.orgs.length > 0 ? orgSwitcher(base, standing, page.orgFilter) : ''}
  <div class="account">
    <span class="email" title="Signed in">${user.email}</span>
    <form method="post" action="${base}/auth/signout" data-signout>
      <button type="submit" class="button quiet">Sign out</button>
    </form>
  </div>`
      : ''
  }
</header>
<main id="main" tabindex="-1">
${page.body}
</main>
</body>
</html>
`;
}
