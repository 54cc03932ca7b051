import { NotFoundError } from '../domain/errors.js';
import type { CloudIdentity } from '../domain/records.js';
import type { Stores } from '../ports/UnitOfWork.js';
import type { CoreDeps } from '../usecases/CoreDeps.js';
import type { ParsedVine } from '../usecases/vineInput.js';

/**
 * The cloud identity a vine of `ownerId` is to use: an existing one of the owner's, or a new one
 * made from the settings given (an assumed role without an external id gets a generated one).
 */
export async function cloudIdentityFor(
  stores: Stores,
  deps: Pick<CoreDeps, 'random'>,
  ownerId: string,
  parsed: ParsedVine['cloud_identity'],
): Promise<CloudIdentity | null> {
  if (parsed === null) return null;
  if ('id' in parsed) {
    const found = await stores.cloudIdentities.get(ownerId, parsed.id);
    if (!found) throw new NotFoundError('cloud_identity');
    return found;
  }
  return stores.cloudIdentities.create(
    parsed.kind === 'assume_role'
      ? {
          id: deps.random.uuid(),
          owner_id: ownerId,
          kind: 'assume_role',
          provider: 'aws',
          role_arn: parsed.role_arn,
          external_id: parsed.external_id ?? deps.random.uuid(),
        }
      : { id: deps.random.uuid(), owner_id: ownerId, ...parsed },
  );
}
