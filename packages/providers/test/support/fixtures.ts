import { readFileSync } from 'node:fs';

const ROOT = new URL('../../../../test-fixtures/providers/', import.meta.url);

/** A recorded response body of `test-fixtures/providers/<provider>/<name>.json`. */
export function fixture<T = unknown>(provider: 'github' | 'gitlab' | 'bitbucket', name: string): T {
  return JSON.parse(readFileSync(new URL(`${provider}/${name}.json`, ROOT), 'utf8')) as T;
}

export const REDIRECT_URI = 'https://trellis.example.test/api/auth/callback';
export const CLIENT = { clientId: 'client-id-1', clientSecret: 'client-secret-1' };

/** The values the control plane sends a provider with, and gets back at the callback. */
export function authorizationResponse(parameters: Record<string, string>) {
  return {
    redirectUri: REDIRECT_URI,
    state: 'github.state-1',
    codeVerifier: 'verifier-verifier-verifier-verifier-verifier-1',
    nonce: 'nonce-1',
    parameters: { state: 'github.state-1', ...parameters },
  };
}

const VCS_ROOT = new URL('../../../../test-fixtures/vcs/', import.meta.url);

/** The raw bytes of a recorded webhook body, `test-fixtures/vcs/<provider>/<name>.json`. */
export function vcsPayload(provider: 'github' | 'gitlab' | 'bitbucket', name: string): Buffer {
  return readFileSync(new URL(`${provider}/${name}.json`, VCS_ROOT));
}
