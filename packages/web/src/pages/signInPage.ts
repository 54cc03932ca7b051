import type { ConfiguredProvider } from '@trellis/core';
import { html } from '../html.js';
import type { Page } from '../layout.js';

export interface SignInPageInput {
  base: string;
  next: string;
  /** Each one a button: `/auth/signin/{id}` starts it, labelled "Sign in with {name}". */
  providers: readonly ConfiguredProvider[];
  bootstrapEnabled: boolean;
  /** Set when the user came from the CLI login page, so the page can say where they will land. */
  forCliLogin: boolean;
  /** Why the last sign-in failed: the `?error=` code the callback sends back, with its provider. */
  error: { code: string; provider: string | null } | null;
}

/** What each `?error=` code of the sign-in callback means to the person signing in. */
function failureMessage(code: string, provider: string): string {
  const text = failureText(code, provider);
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function failureText(code: string, provider: string): string {
  switch (code) {
    case 'invalid_state':
      return 'This sign-in could not be verified: it took too long, was already used, or was started in another browser. Please try again.';
    case 'access_denied':
      return `The sign-in was cancelled at ${provider}.`;
    case 'email_not_verified':
      return `Your ${provider} account has no verified email address. Verify one at ${provider}, then sign in again.`;
    case 'provider_unavailable':
      return `${provider} could not be reached. Please try again in a moment.`;
    case 'provider_not_configured':
      return `Sign-in with ${provider} is not set up on this server.`;
    case 'provider_mismatch':
    case 'provider_error':
    case 'invalid_id_token':
      return `${provider} did not confirm who you are. Please try again.`;
    case 'invalid_bootstrap_token':
      return 'That sign-in token is not valid, or it was already used. Use the token set in TRELLIS_BOOTSTRAP_TOKEN, or the link trellis-server printed when it started.';
    case 'invalid_sign_in_link':
      return 'That sign-in link is not valid: it was already used, or it expired. Ask whoever sent it for a new one (trellis-server users invite).';
    case 'too_many_attempts':
      return 'Too many wrong sign-in tokens came from your address. Wait a few minutes, then try again.';
    default:
      return 'The sign-in failed. Please try again; if it keeps failing, the server log says why.';
  }
}

/**
 * A button per provider, and, when the server runs with a bootstrap token, how the local
 * administrator signs in. The token itself is never part of a page: the administrator pastes it.
 */
export function signInPage(input: SignInPageInput): Page {
  const { base, next, providers, error } = input;
  const query = next === '/' ? '' : `?next=${encodeURIComponent(next)}`;
  const providerName = providers.find((provider) => provider.id === error?.provider)?.name ?? 'the provider';
  return {
    title: 'Sign in',
    body: html`<section class="signin card">
  <h1>Sign in to Trellis</h1>
  ${error ? html`<p class="error" role="alert" data-signin-error="${error.code}">${failureMessage(error.code, providerName)}</p>` : ''}
  ${input.forCliLogin ? html`<p class="notice">Sign in to approve the login of the <code>trellis</code> command line.</p>` : ''}
  ${
    providers.length > 0
      ? html`<ul class="providers">
    ${providers.map(
      (provider) =>
        html`<li><a class="button provider provider-${provider.id}" href="${base}/auth/signin/${encodeURIComponent(provider.id)}${query}">Sign in with ${provider.name}</a></li>`,
    )}
  </ul>`
      : ''
  }
  ${
    input.bootstrapEnabled
      ? html`<div class="bootstrap">
    <h2>Local administrator</h2>
    <p>Paste the token set in <code>TRELLIS_BOOTSTRAP_TOKEN</code> here. Without one, <code>trellis-server</code>
    prints a one-time sign-in link (<code>…/auth/bootstrap?token=…</code>) when it starts: open it, or paste its token.</p>
    <form method="get" action="${base}/auth/bootstrap" class="inline-form">
      <input type="hidden" name="next" value="${next}">
      <label for="bootstrap-token" class="visually-hidden">Sign-in token</label>
      <input id="bootstrap-token" name="token" type="password" autocomplete="off" required placeholder="Sign-in token">
      <button type="submit" class="button">Sign in</button>
    </form>
  </div>`
      : ''
  }
  ${
    providers.length === 0 && !input.bootstrapEnabled
      ? html`<p class="error">No sign-in method is configured. Set the OAuth application of a provider
    (<code>TRELLIS_GITHUB_CLIENT_ID</code> and <code>TRELLIS_GITHUB_CLIENT_SECRET</code>, for example) or
    <code>TRELLIS_BOOTSTRAP_TOKEN</code>, then restart <code>trellis-server</code>.</p>`
      : ''
  }
</section>`,
  };
}
