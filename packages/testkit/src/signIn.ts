/**
 * The one way tests sign in: through the bootstrap link (a web session cookie) and the CLI's
 * device login over HTTP, as a person would; or, in-process, through the auth use cases of a
 * control plane a test holds.
 */
import type { AuthUseCases } from '@trellis/core';

export interface CliTokens {
  access_token: string;
  refresh_token: string;
}

/** The `trellis_session=…` pair the bootstrap sign-in link sets on `url`. */
export async function bootstrapSessionCookie(
  url: string,
  bootstrapToken: string,
  fetchImpl: typeof fetch = fetch,
): Promise<string> {
  const response = await fetchImpl(`${url}/auth/bootstrap?token=${encodeURIComponent(bootstrapToken)}`, {
    redirect: 'manual',
  });
  const cookie = response.headers
    .getSetCookie()
    .map((header) => header.split(';')[0] as string)
    .find((pair) => /^(__Host-)?trellis_session=/.test(pair));
  if (response.status !== 303 || !cookie) {
    throw new Error(`the bootstrap sign-in set no session cookie (HTTP ${response.status})`);
  }
  return cookie;
}

/**
 * CLI tokens of the user behind `cookie`, through the device login over HTTP (generate, then
 * exchange), as `trellis login` gets them. `origin` is the web origin the server trusts.
 */
export async function deviceLoginTokens(
  url: string,
  cookie: string,
  origin = new URL(url).origin,
  fetchImpl: typeof fetch = fetch,
): Promise<CliTokens> {
  const deviceCode = crypto.randomUUID();
  const generated = await fetchImpl(`${url}/api/auth/cli/generate`, {
    method: 'POST',
    headers: { cookie, origin, 'content-type': 'application/json' },
    body: JSON.stringify({ device_code: deviceCode }),
  });
  if (!generated.ok) throw new Error(`device login generate failed (HTTP ${generated.status})`);
  const { verification_code } = (await generated.json()) as { verification_code: string };
  const exchanged = await fetchImpl(`${url}/api/auth/cli/exchange`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ device_code: deviceCode, verification_code }),
  });
  if (!exchanged.ok) throw new Error(`device login exchange failed (HTTP ${exchanged.status})`);
  return (await exchanged.json()) as CliTokens;
}

/** CLI tokens of the user of `email` (created on first use), through the auth use cases. */
export async function cliTokensFor(auth: AuthUseCases, email: string): Promise<CliTokens> {
  const user = await auth.ensureUser({ email });
  const deviceCode = crypto.randomUUID();
  const { verification_code } = await auth.generateCliLogin({ userId: user.id, email: user.email }, deviceCode);
  const { access_token, refresh_token } = await auth.exchangeCliLogin({ device_code: deviceCode, verification_code });
  return { access_token, refresh_token };
}
