import type { UserActor } from '../domain/actors.js';
import { ForbiddenError } from '../domain/errors.js';

/**
 * Refuses an organization API token what only a person does (issue 23): an organization token acts
 * within its organization, so it never creates organizations, reads or uses its creator's
 * provider sign-ins (repositories, webhooks made with the creator's token), or answers
 * invitations. `403 org_token_not_allowed`; a personal token or a signed-in person may.
 */
export function refuseOrganizationToken(actor: UserActor, what: string): void {
  if (actor.apiToken?.orgId) {
    throw new ForbiddenError(
      'org_token_not_allowed',
      `an organization API token cannot ${what}: it acts only within its organization; use a personal token or sign in`,
    );
  }
}
