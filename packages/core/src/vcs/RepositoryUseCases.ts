import type { UserActor } from '../domain/actors.js';
import { GIT_PROVIDERS, type GitProvider, isOneOf, PROVIDER_NAMES } from '../domain/enums.js';
import {
  ConflictError,
  isDomainError,
  UnauthorizedError,
  UnavailableError,
  ValidationError,
} from '../domain/errors.js';
import type { Identity } from '../domain/records.js';
import type { GitRepository, RepositoryLister } from '../ports/RepositoryLister.js';
import { ownerScope } from '../ports/UnitOfWork.js';
import type { CoreDeps } from '../usecases/CoreDeps.js';
import { isStale, openProviderTokens, type ProviderTokens, renewProviderTokens } from '../usecases/providerTokens.js';
import { refuseOrganizationToken } from '../usecases/personOnly.js';

/** At most this many repositories are listed (every page is followed up to it). */
export const MAX_LISTED_REPOSITORIES = 1000;

const isRefusedToken = (error: unknown) => isDomainError(error) && error.code === 'provider_token_expired';

/** The user's repositories at a git provider, through the token of their sign-in there (SPEC §4.3). */
export class RepositoryUseCases {
  constructor(private readonly deps: CoreDeps) {}

  /**
   * Lists with the stored token; an expired one (by its stated lifetime, or refused by the
   * provider) is renewed once with the stored refresh token, and the renewed tokens are stored.
   */
  async list(user: UserActor, provider: unknown): Promise<GitRepository[]> {
    refuseOrganizationToken(user, "list its creator's repositories");
    if (!isOneOf(GIT_PROVIDERS, provider)) {
      throw new ValidationError(`provider must be one of ${GIT_PROVIDERS.join(', ')}`, [
        { path: 'provider', message: `must be one of ${GIT_PROVIDERS.join(', ')}` },
      ]);
    }
    const name = PROVIDER_NAMES[provider];
    const identities = await this.deps.uow.run(ownerScope(user.userId), (stores) =>
      stores.identities.listForUser(user.userId),
    );
    const identity = identities.find((candidate) => candidate.provider === provider);
    if (!identity?.provider_token) {
      throw new ConflictError(
        'provider_not_linked',
        `your account is not linked to ${name}: sign in with ${name} in the web interface first`,
      );
    }
    const lister = this.deps.providers.repositories[provider];
    if (!lister) {
      throw new UnavailableError('provider_not_configured', `${name} is not configured on this server`);
    }
    let tokens: ProviderTokens;
    try {
      tokens = await openProviderTokens(this.deps.secrets, { ...identity, provider_token: identity.provider_token });
    } catch (error) {
      throw expired(provider, error);
    }
    const list = (accessToken: string) => lister.listRepositories(accessToken, { limit: MAX_LISTED_REPOSITORIES });
    try {
      const stale = isStale(tokens, this.deps.clock.now());
      if (stale && tokens.refreshToken) tokens = await this.renew(identity, lister, tokens.refreshToken);
      try {
        return await list(tokens.accessToken);
      } catch (error) {
        if (!isRefusedToken(error) || !tokens.refreshToken || stale) throw error;
        return await list((await this.renew(identity, lister, tokens.refreshToken)).accessToken);
      }
    } catch (error) {
      if (isRefusedToken(error)) throw expired(provider, error);
      throw error;
    }
  }

  private renew(identity: Identity, lister: RepositoryLister, refreshToken: string): Promise<ProviderTokens> {
    return renewProviderTokens(this.deps, identity, lister, refreshToken, (renewed) =>
      this.deps.uow.run(ownerScope(identity.user_id), async (stores) => {
        await stores.identities.upsert(renewed);
      }),
    );
  }
}

function expired(provider: GitProvider, cause: unknown): UnauthorizedError {
  const name = PROVIDER_NAMES[provider];
  return new UnauthorizedError(
    'provider_token_expired',
    `${name} no longer accepts the token of your sign-in (expired or revoked): sign in with ${name} again in the web interface`,
    { cause },
  );
}
