import { PROVIDER_NAMES } from '../domain/enums.js';
import { roleRank } from '../domain/roles.js';
import { ConflictError, isDomainError, UnauthorizedError, UnavailableError } from '../domain/errors.js';
import type { VcsConnection } from '../domain/vcs.js';
import type { SecretBox } from '../ports/SecretBox.js';
import type { Stores } from '../ports/UnitOfWork.js';
import type { CoreDeps } from './CoreDeps.js';
import { freshProviderTokens, openProviderTokens, type ProviderTokens } from './providerTokens.js';

/**
 * The connecting user's usable access token at the connection's provider (issue 13): the token of
 * their sign-in there, opened from its sealed value and renewed with the stored refresh token when
 * it has expired by its stated lifetime (the renewed tokens are stored through `stores`).
 *
 * `stores` must see the connecting user's identities: system work (webhooks, feedback, clones) or
 * the user's own scope. Throws `ConflictError('provider_not_linked')` when the user has no
 * identity (or no stored token) at the provider, `UnavailableError('provider_not_configured')`
 * when the server has no such provider, and `UnauthorizedError('provider_token_expired')` when the
 * token cannot be opened or renewed (the user signs in with the provider again).
 */
export async function vcsTokenFor(
  stores: Pick<Stores, 'identities' | 'orgs'>,
  deps: Pick<CoreDeps, 'secrets' | 'clock' | 'providers'>,
  connection: Pick<VcsConnection, 'provider' | 'connected_by'> &
    Partial<Pick<VcsConnection, 'owner_id' | 'repository'>>,
): Promise<string> {
  const { provider } = connection;
  const name = PROVIDER_NAMES[provider];
  if (connection.owner_id !== undefined && !(await connectorStillAdmin(stores, connection.owner_id, connection))) {
    throw needsReconnect(connection);
  }
  const identities = await stores.identities.listForUser(connection.connected_by);
  const identity = identities.find((candidate) => candidate.provider === provider);
  if (!identity?.provider_token) {
    throw new ConflictError(
      'provider_not_linked',
      `the person who connected this vine (${connection.connected_by}) is not linked to ${name}: they sign in with ${name} in the web interface, or someone linked to ${name} connects the vine again`,
    );
  }
  const lister = deps.providers.repositories[provider];
  if (!lister) {
    throw new UnavailableError('provider_not_configured', `${name} is not configured on this server`);
  }
  let tokens: ProviderTokens;
  try {
    tokens = await openProviderTokens(deps.secrets, { ...identity, provider_token: identity.provider_token });
  } catch (error) {
    throw providerTokenExpired(provider, error);
  }
  try {
    const fresh = await freshProviderTokens(deps, identity, lister, tokens, (renewed) =>
      stores.identities.upsert(renewed).then(() => undefined),
    );
    return fresh.accessToken;
  } catch (error) {
    throw providerTokenExpired(provider, error);
  }
}

/**
 * The rule of borrowed tokens (issue 23): the control plane uses the token of the person who
 * connected a vine only while that person may still manage the vine's owner: the owner itself
 * (a personal vine), or an `admin` or `owner` of the organization. Anyone else's connection
 * `needs_reconnect`: nothing is fetched, posted or commented with their token, and the jobs that
 * need it fail with that reason, until an admin connects the vine again.
 */
export async function connectorStillAdmin(
  stores: Pick<Stores, 'orgs'>,
  ownerId: string,
  connection: Pick<VcsConnection, 'connected_by'>,
): Promise<boolean> {
  if (connection.connected_by === ownerId) return true;
  const memberships = await stores.orgs.membershipsOf(connection.connected_by);
  return memberships.some((m) => m.org_id === ownerId && roleRank(m.role) >= roleRank('admin'));
}

/** `409 needs_reconnect`: the connecting person is no longer an admin of the vine's owner. */
export function needsReconnect(connection: { repository?: string }): ConflictError {
  return new ConflictError(
    'needs_reconnect',
    `the person who connected ${connection.repository ?? 'this vine'} is no longer an admin of its owner, so their token is not used: an admin connects the vine again (trellis repos connect, or the vine's page)`,
  );
}

/** `401 provider_token_expired` saying how to fix it, for a refused or unreadable token; other errors pass through. */
function providerTokenExpired(provider: VcsConnection['provider'], cause: unknown): unknown {
  if (!isDomainError(cause) || (cause.code !== 'provider_token_expired' && cause.code !== 'secret_unreadable')) {
    return cause;
  }
  const name = PROVIDER_NAMES[provider];
  return new UnauthorizedError(
    'provider_token_expired',
    `${name} no longer accepts the stored token (expired or revoked) and it cannot be renewed: sign in with ${name} again in the web interface`,
    { cause },
  );
}

/** Where a connection's webhook secret is bound when sealed: it opens for this vine only. */
export function webhookSecretContext(vineId: string): string {
  return `vcs-webhook:${vineId}`;
}

/** Seals a connection's webhook secret for `VcsConnection.webhook_secret_sealed`. */
export function sealWebhookSecret(secrets: SecretBox, vineId: string, secret: string): Promise<string> {
  return secrets.seal(secret, webhookSecretContext(vineId));
}

/** The webhook secret of a connection, to verify a delivery's signature with. */
export function openWebhookSecret(
  secrets: SecretBox,
  connection: Pick<VcsConnection, 'vine_id' | 'webhook_secret_sealed'>,
): Promise<string> {
  return secrets.open(connection.webhook_secret_sealed, webhookSecretContext(connection.vine_id));
}
