import type { UserActor } from '@trellis/core';
import { utc } from '../format.js';
import { html } from '../html.js';
import type { Page } from '../layout.js';

/** What a CLI login may do, said the same way on every page that asks for it. */
const WHAT_THE_CLI_MAY_DO =
  'It will be able to create and run deployments, read logs and register agents for your account.';

/** Step 1: the signed-in user is asked, plainly, before anything is created. */
export function approveCliLoginPage(input: { base: string; user: UserActor; deviceCode: string }): Page {
  return {
    title: 'Approve the CLI login',
    body: html`<section class="card narrow cli-login">
  <h1>A Trellis CLI is asking for access</h1>
  <p class="lead">A Trellis CLI is asking to sign in as <strong>${input.user.email}</strong>. ${WHAT_THE_CLI_MAY_DO}</p>
  <p>Approve only if you have just run <code>trellis login</code> yourself. After you approve, this page
  shows a 6-character code to type at the CLI's <code>Verification code:</code> prompt.</p>
  <form method="post" action="${input.base}/cli/login" class="actions">
    <input type="hidden" name="device_code" value="${input.deviceCode}">
    <button type="submit" class="button primary" id="approve">Approve and show the code</button>
    <a class="button quiet" href="${input.base}/">Cancel</a>
  </form>
  <p class="muted small">Login request <code>${input.deviceCode}</code></p>
</section>`,
  };
}

/** Step 2: the verification code, big and copyable. */
export function cliLoginCodePage(input: { user: UserActor; verificationCode: string; expiresAt: string }): Page {
  return {
    title: 'Your CLI verification code',
    body: html`<section class="card narrow cli-login">
  <h1>Type this code into the CLI</h1>
  <p>The CLI waiting at <code>Verification code:</code> signs in as <strong>${input.user.email}</strong> once you
  type this code there.</p>
  <div class="code-box">
    <output id="verification-code" class="verification-code" aria-label="Verification code">${input.verificationCode}</output>
    <button type="button" class="button" data-copy="${input.verificationCode}">Copy</button>
  </div>
  <p class="muted">The code works once, until ${utc(input.expiresAt)} (10 minutes). You can close this page afterwards.
  Nobody from Trellis will ever ask you for it.</p>
</section>`,
  };
}

/** A device code that is missing or not a UUID: the link did not come from `trellis login`. */
export function invalidCliLoginPage(): Page {
  return {
    status: 400,
    title: 'Invalid login link',
    body: html`<section class="card narrow problem">
  <h1>This login link is not valid</h1>
  <p>The address must be the one <code>trellis login</code> printed, with its <code>device_code</code>.
  Run <code>trellis login</code> again and open the link it prints.</p>
</section>`,
  };
}

/** The device code already has a login: approved before, maybe in another tab, or replayed. */
export function usedCliLoginPage(): Page {
  return {
    status: 409,
    title: 'Login already approved',
    body: html`<section class="card narrow problem">
  <h1>This login request was already approved</h1>
  <p>Each <code>trellis login</code> can be approved once, and its code shown once. If the CLI is still
  waiting, stop it (Ctrl-C) and run <code>trellis login</code> again to get a new link.</p>
  <p>Opening this page again approved nothing more.</p>
</section>`,
  };
}
