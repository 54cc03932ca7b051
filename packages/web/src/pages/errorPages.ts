import { html } from '../html.js';
import type { Page } from '../layout.js';

export function notFoundPage(base: string, what = 'page'): Page {
  return {
    status: 404,
    title: 'Not found',
    body: html`<section class="card narrow problem">
  <h1>Not found</h1>
  <p>This ${what} does not exist, or it belongs to someone else.</p>
  <p><a href="${base}/">Back to the dashboard</a></p>
</section>`,
  };
}

export function crossSitePage(): Page {
  return {
    status: 403,
    title: 'Request refused',
    body: html`<section class="card narrow problem">
  <h1>Request refused</h1>
  <p>This form was not sent from a Trellis page, so it was refused. Go back to the page, reload it and try again.</p>
</section>`,
  };
}

export function signInAgainPage(base: string): Page {
  return {
    status: 401,
    title: 'Signed out',
    body: html`<section class="card narrow problem">
  <h1>Your session has ended</h1>
  <p><a href="${base}/signin">Sign in again</a>, then repeat what you were doing.</p>
</section>`,
  };
}

export function serverErrorPage(base: string): Page {
  return {
    status: 500,
    title: 'Something went wrong',
    body: html`<section class="card narrow problem">
  <h1>Something went wrong</h1>
  <p>The control plane could not show this page. Try again in a moment; if it keeps happening, the server log says why.</p>
  <p><a href="${base}/">Back to the dashboard</a></p>
</section>`,
  };
}
