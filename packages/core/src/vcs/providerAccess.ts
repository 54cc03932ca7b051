import type { UserActor } from '../domain/actors.js';
import { type GitProvider, PROVIDER_NAMES } from '../domain/enums.js';
import { ConflictError, isDomainError, UnavailableError } from '../domain/errors.js';
import { ownerScope } from '../ports/UnitOfWork.js';
import type { CoreDeps, VcsPort } from '../usecases/CoreDeps.js';
import { refuseOrganizationToken } from '../usecases/personOnly.js';
import { vcsTokenFor } from '../usecases/vcsTokens.js';

/**
 * What connecting a repository needs of a git provider, for vines (`VcsUseCases`) and registry
 * modules (`ModuleRepositoryUseCases`) alike: the provider's adapter, the acting person's own
 * token there, and deleting a webhook made with it.
 */

/** The provider's adapter; `503 provider_not_configured` when this server has none. */
export function providerPort(deps: Pick<CoreDeps, 'vcs'>, provider: GitProvider): VcsPort {
  const port = deps.vcs[provider];
  if (!port) {
    throw new UnavailableError(
      'provider_not_configured',
      `${PROVIDER_NAMES[provider]} is not configured on this server (TRELLIS_${provider.toUpperCase()}_CLIENT_ID)`,
    );
  }
  return port;
}

/** The acting person's token at the provider (their own identities: their own scope). */
export async function personalProviderToken(
  deps: Pick<CoreDeps, 'uow'> & Parameters<typeof vcsTokenFor>[1],
  actor: UserActor,
  provider: GitProvider,
): Promise<string> {
  refuseOrganizationToken(actor, "use its creator's sign-in at a git provider (connect with a manual webhook)");
  try {
    return await deps.uow.run(ownerScope(actor.userId), (stores) =>
      vcsTokenFor(stores, deps, { provider, connected_by: actor.userId }),
    );
  } catch (error) {
    if (!isDomainError(error) || error.code !== 'provider_not_linked') throw error;
    const name = PROVIDER_NAMES[provider];
    throw new ConflictError(
      'provider_not_linked',
      `your account is not linked to ${name}: sign in with ${name} in the web interface first (Trellis creates the webhook with that sign-in's token), or connect with a manual webhook`,
      { cause: error },
    );
  }
}

/** Deletes a webhook; answers null, or why it could not be deleted (nothing to delete without a token). */
export async function deleteWebhook(
  deps: Pick<CoreDeps, 'vcs'>,
  hook: { provider: GitProvider; repository: string; hook_id: string | null },
  token: string | null,
): Promise<string | null> {
  const port = deps.vcs[hook.provider];
  if (!port) return 'provider_not_configured';
  if (!hook.hook_id || token === null) return null;
  try {
    await port.api.deleteHook(token, hook.repository, hook.hook_id);
    return null;
  } catch (error) {
    return hookFailure(error);
  }
}

/** A failure worth keeping on the connection: a problem's code, or the error's name. */
export function hookFailure(error: unknown): string {
  if (isDomainError(error)) return error.code;
  return error instanceof Error ? error.name : 'error';
}
