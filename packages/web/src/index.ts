export { createWebRouter, type WebOptions } from './createWebRouter.js';
export { escapeHtml, externalUrl, Html, html } from './html.js';
export { CONTENT_SECURITY_POLICY } from './securityHeaders.js';
