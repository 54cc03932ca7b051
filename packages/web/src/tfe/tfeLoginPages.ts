import type { TfeAuthorizationRequest, UserActor } from '@trellis/core';
import { html } from '../html.js';
import type { Page } from '../layout.js';

/**
 * `tofu login` (issue 26): the signed-in person is asked, plainly, before a token is made. The
 * answer goes back to the CLI's temporary server on this machine (`redirect_uri`, always loopback).
 */
export function approveTfeLoginPage(input: {
  base: string;
  user: UserActor;
  request: TfeAuthorizationRequest;
  tokenDays: number;
}): Page {
  const { request } = input;
  const port = new URL(request.redirect_uri).port;
  return {
    title: 'Approve tofu login',
    body: html`<section class="card narrow cli-login">
  <h1>OpenTofu is asking for an API token</h1>
  <p class="lead"><code>tofu login</code> (or <code>terraform login</code>) is asking for a token that acts as
  <strong>${input.user.email}</strong>: it will read and write the state of your workspaces and lock them,
  as you may.</p>
  <p>Approve only if you have just run <code>tofu login</code> yourself on this computer. The token is an API
  token of yours, valid ${String(input.tokenDays)} days; it is listed with your tokens, where you can revoke it.</p>
  <form method="post" action="${input.base}/oauth/authorize" class="actions">
    <input type="hidden" name="response_type" value="code">
    <input type="hidden" name="client_id" value="${request.client_id}">
    <input type="hidden" name="redirect_uri" value="${request.redirect_uri}">
    <input type="hidden" name="state" value="${request.state}">
    <input type="hidden" name="code_challenge" value="${request.code_challenge}">
    <input type="hidden" name="code_challenge_method" value="${request.code_challenge_method}">
    <button type="submit" class="button primary" id="approve">Approve</button>
    <a class="button quiet" href="${input.base}/">Cancel</a>
  </form>
  <p class="muted small">The token goes to the program listening on this computer's port ${port}.</p>
</section>`,
  };
}

/** The authorization request is not one `tofu login` makes (or was altered). */
export function invalidTfeLoginPage(reason: string): Page {
  return {
    status: 400,
    title: 'Invalid login request',
    body: html`<section class="card narrow problem">
  <h1>This login request is not valid</h1>
  <p>${reason}.</p>
  <p>Run <code>tofu login &lt;host&gt;</code> again and open the link it prints.</p>
</section>`,
  };
}
