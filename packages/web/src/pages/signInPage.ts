import { html } from '../html.js';
import type { Page } from '../layout.js';

/** A sign-in provider as the composition root describes it: `/auth/signin/{id}` starts it. */
export interface SignInProvider {
  id: string;
  /** What the button says after "Sign in with", e.g. `GitHub`. */
  name: string;
}

export interface SignInPageInput {
  base: string;
  next: string;
  providers: readonly SignInProvider[];
  bootstrapEnabled: boolean;
  /** Set when the user came from the CLI login page, so the page can say where they will land. */
  forCliLogin: boolean;
}

/**
 * A button per provider, and, when the server runs with a bootstrap token, how the local
 * administrator signs in. The token itself is never part of a page: the administrator pastes it.
 */
export function signInPage(input: SignInPageInput): Page {
  const { base, next, providers } = input;
  const query = next === '/' ? '' : `?next=${encodeURIComponent(next)}`;
  return {
    title: 'Sign in',
    body: html`<section class="signin card">
  <h1>Sign in to Trellis</h1>
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
    <p>When it starts, <code>trellis-server</code> prints a sign-in link (<code>…/auth/bootstrap?token=…</code>).
    Open that link, or paste its token here.</p>
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
