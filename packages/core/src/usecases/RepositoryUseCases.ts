import type { UserActor } from '../domain/actors.js';
import { GIT_PROVIDERS, type GitProvider, isOneOf, PROVIDER_NAMES } from '../domain/enums.js';
import {
  ConflictError,
  isDomainError,
  UnauthorizedError,
  UnavailableError,
  ValidationError,
} from '../domain/errors.js';
import type { GitRepository } from '../ports/RepositoryLister.js';
import { ownerScope } from '../ports/UnitOfWork.js';
import type { CoreDeps } from './CoreDeps.js';
import { identityTokenContext } from './SignInUseCases.js';

/** At most this many repositories are listed (every page is followed up to it). */
export const MAX_LISTED_REPOSITORIES = 1000;

/** The user's repositories at a git provider, through the token of their sign-in there (SPEC §4.3). */
export class RepositoryUseCases {
  constructor(private readonly deps: CoreDeps) {}

  async list(user: UserActor, provider: unknown): Promise<GitRepository[]> {
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
    let token: string;
    try {
      token = await this.deps.secrets.open(
        identity.provider_token,
        identityTokenContext(identity.provider, identity.provider_user_id),
      );
    } catch (error) {
      throw expired(provider, error);
    }
    try {
      return await lister.listRepositories(token, { limit: MAX_LISTED_REPOSITORIES });
    } catch (error) {
      if (isDomainError(error) && error.code === 'provider_token_expired') throw expired(provider, error);
      throw error;
    }
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
