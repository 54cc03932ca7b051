import type { UserActor } from '@trellis/core';
import { type Html, html } from './html.js';

export type Section = 'vineyards' | 'jobs' | 'workers' | 'tokens';

/** What a page handler returns; the router wraps it in the layout. */
export interface Page {
  status?: number;
  title: string;
  /** The navigation entry to highlight. */
  section?: Section;
  body: Html;
}

export interface LayoutContext {
  /** Where the web interface is mounted ('' at the root, '/trellis' under a prefix). */
  base: string;
  user: UserActor | null;
  assets: { css: string; js: string; icon: string };
}

const NAVIGATION: readonly { section: Section; label: string; path: string }[] = [
  { section: 'vineyards', label: 'Vineyards', path: '/vineyards' },
  { section: 'jobs', label: 'Jobs', path: '/jobs' },
  { section: 'workers', label: 'Workers', path: '/workers' },
  { section: 'tokens', label: 'API tokens', path: '/tokens' },
];

export function layout(page: Page, context: LayoutContext): Html {
  const { base, user, assets } = context;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title} · Trellis</title>
<link rel="icon" href="${assets.icon}" type="image/svg+xml">
<link rel="stylesheet" href="${assets.css}">
<script src="${assets.js}" defer></script>
</head>
<body data-base="${base}">
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
  <div class="account">
    <span class="email" title="Signed in">${user.email}</span>
    <form method="post" action="${base}/auth/signout" data-signout data-then="${base}/signin">
      <button type="submit" class="button quiet">Sign out</button>
    </form>
  </div>`
      : ''
  }
</header>
<main>
${page.body}
</main>
</body>
</html>
`;
}
