export { createWebRouter, type WebOptions } from './createWebRouter.js';
export { escapeHtml, externalUrl, Html, html } from './html.js';
export type { SignInProvider } from './pages/signInPage.js';
export { CONTENT_SECURITY_POLICY } from './securityHeaders.js';
