import type { IdentityProvider } from '../domain/enums.js';
import type { Identity } from '../domain/records.js';
import type { Clock } from '../ports/Clock.js';
import type { RepositoryLister } from '../ports/RepositoryLister.js';
import type { SecretBox } from '../ports/SecretBox.js';

/** What is sealed in `identities.provider_token`. */
export interface ProviderTokens {
  accessToken: string;
  refreshToken: string | null;
  /** When `accessToken` stops working, if it does. */
  expiresAt: string | null;
}

/** Where a token is bound when sealed: a token cannot be moved to another identity row. */
export function identityTokenContext(provider: IdentityProvider, providerUserId: string): string {
  return `identity:${provider}:${providerUserId}`;
}

export function expiresAtFrom(now: Date, expiresInSeconds: number | null): string | null {
  return expiresInSeconds === null ? null : new Date(now.getTime() + expiresInSeconds * 1000).toISOString();
}

export function sealProviderTokens(
  secrets: SecretBox,
  identity: Pick<Identity, 'provider' | 'provider_user_id'>,
  tokens: ProviderTokens,
): Promise<string> {
  return secrets.seal(
    JSON.stringify({
      v: 1,
      access_token: tokens.accessToken,
      refresh_token: tokens.refreshToken,
      expires_at: tokens.expiresAt,
    }),
    identityTokenContext(identity.provider, identity.provider_user_id),
  );
}

/**
 * The tokens of an identity. Throws `UnauthorizedError('secret_unreadable')` when the sealed value
 * does not open (another key). A sealed bare token (no envelope) is an access token alone.
 */
export async function openProviderTokens(
  secrets: SecretBox,
  identity: Pick<Identity, 'provider' | 'provider_user_id'> & { provider_token: string },
): Promise<ProviderTokens> {
  const plaintext = await secrets.open(
    identity.provider_token,
    identityTokenContext(identity.provider, identity.provider_user_id),
  );
  try {
    const envelope = JSON.parse(plaintext) as {
      v?: unknown;
      access_token?: unknown;
      refresh_token?: unknown;
      expires_at?: unknown;
    };
    if (envelope.v === 1 && typeof envelope.access_token === 'string') {
      return {
        accessToken: envelope.access_token,
        refreshToken: typeof envelope.refresh_token === 'string' ? envelope.refresh_token : null,
        expiresAt: typeof envelope.expires_at === 'string' ? envelope.expires_at : null,
      };
    }
  } catch {
    // Not an envelope: a bare token.
  }
  return { accessToken: plaintext, refreshToken: null, expiresAt: null };
}

/** An access token this close to its expiry is renewed before use. */
export const RENEW_MARGIN_MS = 60_000;

/** Whether the access token has expired (or is about to) by its stated lifetime. */
export function isStale(tokens: ProviderTokens, now: Date): boolean {
  return tokens.expiresAt !== null && Date.parse(tokens.expiresAt) - RENEW_MARGIN_MS <= now.getTime();
}

/**
 * Renews the tokens with the refresh token, seals them and hands the updated identity to `save`.
 * Throws the lister's `UnauthorizedError('provider_token_expired')` when the provider refuses it.
 */
export async function renewProviderTokens(
  deps: { secrets: SecretBox; clock: Clock },
  identity: Identity,
  lister: RepositoryLister,
  refreshToken: string,
  save: (identity: Identity) => Promise<void>,
): Promise<ProviderTokens> {
  const renewed = await lister.refreshAccessToken(refreshToken);
  const tokens: ProviderTokens = {
    accessToken: renewed.accessToken,
    refreshToken: renewed.refreshToken ?? refreshToken,
    expiresAt: expiresAtFrom(deps.clock.now(), renewed.expiresInSeconds),
  };
  await save({ ...identity, provider_token: await sealProviderTokens(deps.secrets, identity, tokens) });
  return tokens;
}

/** The tokens, renewed first when stale and renewable; a stale token without a refresh token is tried as is. */
export async function freshProviderTokens(
  deps: { secrets: SecretBox; clock: Clock },
  identity: Identity,
  lister: RepositoryLister,
  tokens: ProviderTokens,
  save: (identity: Identity) => Promise<void>,
): Promise<ProviderTokens> {
  if (!isStale(tokens, deps.clock.now()) || !tokens.refreshToken) return tokens;
  return renewProviderTokens(deps, identity, lister, tokens.refreshToken, save);
}
