import { createHash } from 'node:crypto';
import { isLoopbackRedirect, SignedUrls, type UserActor, UnauthorizedError, ValidationError } from '@trellis/core';
import { createTestCore } from '@trellis/testkit';
import { describe, expect, it } from 'vitest';
import { expectFailure, expectThrown } from '../usecases/helpers.js';

const VERIFIER = 'd9a3f6c0-1b7e-4c59-9d0e-2f3a4b5c6d7e.123456789';
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url');
const REDIRECT = 'http://localhost:10003/login';

function request(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    response_type: 'code',
    client_id: 'terraform-cli',
    redirect_uri: REDIRECT,
    state: 'state-1',
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
    ...overrides,
  };
}

async function setup() {
  const core = createTestCore({ now: '2026-05-01T00:00:00.000Z' });
  const created = await core.useCases.auth.ensureUser({ email: 'alice@example.com' });
  const alice: UserActor = { userId: created.id, email: created.email };
  return { core, alice, login: core.useCases.tfe.login };
}

function codeOf(redirect: string): string {
  return new URL(redirect).searchParams.get('code') as string;
}

describe('tofu login (the authorization-code grant with PKCE)', () => {
  it('mints an API token of the approving person, once, for the verifier of the challenge', async () => {
    const { core, alice, login } = await setup();
    const { redirect } = await login.approve(alice, request());
    expect(redirect.startsWith(`${REDIRECT}?code=`)).toBe(true);
    expect(new URL(redirect).searchParams.get('state')).toBe('state-1');
    const form = {
      grant_type: 'authorization_code',
      code: codeOf(redirect),
      client_id: 'terraform-cli',
      redirect_uri: REDIRECT,
    };
    const { access_token } = await login.exchange({ ...form, code_verifier: VERIFIER });
    const actor = await core.useCases.apiTokens.authenticate(access_token);
    expect(actor.userId).toBe(alice.userId);
    const [token] = (await core.useCases.apiTokens.list(alice, {})).items;
    expect(token?.name).toMatch(/^tofu-login-/);
    expect(token?.expires_at).toBe('2026-07-30T00:00:00.000Z');
    // A code works once.
    await expectFailure(login.exchange({ ...form, code_verifier: VERIFIER }), ValidationError, 'invalid_grant');
  });

  it('refuses a wrong verifier, another redirect, and an expired code (and burns the code)', async () => {
    const { core, alice, login } = await setup();
    const base = { grant_type: 'authorization_code', client_id: 'terraform-cli', redirect_uri: REDIRECT };
    const wrong = codeOf((await login.approve(alice, request())).redirect);
    await expectFailure(
      login.exchange({ ...base, code: wrong, code_verifier: `${VERIFIER}x` }),
      ValidationError,
      'invalid_grant',
    );
    await expectFailure(
      login.exchange({ ...base, code: wrong, code_verifier: VERIFIER }),
      ValidationError,
      'invalid_grant',
    );
    const moved = codeOf((await login.approve(alice, request())).redirect);
    await expectFailure(
      login.exchange({ ...base, code: moved, redirect_uri: 'http://localhost:10004/login', code_verifier: VERIFIER }),
      ValidationError,
      'invalid_grant',
    );
    const late = codeOf((await login.approve(alice, request())).redirect);
    core.clock.advance({ minutes: 6 });
    await expectFailure(
      login.exchange({ ...base, code: late, code_verifier: VERIFIER }),
      ValidationError,
      'invalid_grant',
    );
  });

  it('approves only loopback redirects on the advertised ports, with S256', async () => {
    const { alice, login } = await setup();
    for (const bad of [
      { redirect_uri: 'https://evil.example.com/login' },
      { redirect_uri: 'http://localhost:9999/login' },
      { redirect_uri: 'http://user@localhost:10000/login' },
      { code_challenge_method: 'plain' },
      { client_id: 'someone-else' },
      { response_type: 'token' },
    ]) {
      await expectFailure(login.approve(alice, request(bad)), ValidationError, 'invalid_authorization_request');
    }
    expect(isLoopbackRedirect('http://127.0.0.1:10010/login')).toBe(true);
    expect(isLoopbackRedirect('http://localhost:10011/login')).toBe(false);
  });
});

describe('signed URLs', () => {
  it('bind one object, one verb and an expiry', () => {
    const core = createTestCore({ now: '2026-05-01T00:00:00.000Z' });
    const urls = new SignedUrls(new Uint8Array(32).fill(7), core.clock);
    const query = urls.sign('PUT', '/_signed/state-uploads/a', 300, { serial: 3 });
    expect(urls.verify('PUT', '/_signed/state-uploads/a', query).serial).toBe(3);
    expectThrown(() => urls.verify('GET', '/_signed/state-uploads/a', query), UnauthorizedError, 'invalid_signed_url');
    expectThrown(() => urls.verify('PUT', '/_signed/state-uploads/b', query), UnauthorizedError, 'invalid_signed_url');
    const tampered = {
      ...query,
      token: Buffer.from(JSON.stringify({ v: 'PUT', o: '/_signed/state-uploads/a', exp: 9e9 })).toString('base64url'),
    };
    expectThrown(
      () => urls.verify('PUT', '/_signed/state-uploads/a', tampered),
      UnauthorizedError,
      'invalid_signed_url',
    );
    core.clock.advance({ seconds: 301 });
    expectThrown(() => urls.verify('PUT', '/_signed/state-uploads/a', query), UnauthorizedError, 'invalid_signed_url');
  });
});
