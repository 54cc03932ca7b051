import { isDomainError, type UseCases, type UserActor } from '@trellis/core';

/**
 * The names of the vineyards these records apply to, by id, for the pages that name one (issue
 * 25: names, not UUIDs); a vineyard the person cannot read is left out, and shown by its id.
 */
export async function vineyardNames(
  useCases: Pick<UseCases, 'vineyards'>,
  user: UserActor,
  records: readonly { vineyard_id: string | null }[],
): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  for (const id of new Set(records.map((record) => record.vineyard_id))) {
    if (id === null) continue;
    const vineyard = await useCases.vineyards.get(user, id).catch((error: unknown) => {
      if (isDomainError(error)) return null;
      throw error;
    });
    if (vineyard) names.set(id, vineyard.name);
  }
  return names;
}
