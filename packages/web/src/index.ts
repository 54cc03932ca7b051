export { createWebRouter, type WebOptions } from './createWebRouter.js';
export { escapeHtml, externalUrl, Html, html } from './html.js';
export { CONTENT_SECURITY_POLICY } from './securityHeaders.js';
export { FEATURE_PAGES, type FeaturePages } from './featurePages.js';
export type { PageContext, WebRouteDeps } from './routing.js';
export { LiveLists, type LiveListsLimits, type LiveListsStats } from './live/LiveLists.js';
