import { TrellisApiError, type TrellisClient } from '@trellis/client';

/**
 * The names of these vineyards, by id, for people to read (issue 25: names, not UUIDs); a
 * vineyard the caller cannot read keeps its id.
 */
export async function vineyardNames(
  client: TrellisClient,
  ids: readonly (string | null)[],
): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  for (const id of new Set(ids)) {
    if (id === null) continue;
    try {
      names.set(id, (await client.getVineyard(id)).name);
    } catch (error) {
      if (!(error instanceof TrellisApiError)) throw error;
      names.set(id, id);
    }
  }
  return names;
}

/** One vineyard's name, or its id when it cannot be read; null stays null. */
export async function vineyardName(client: TrellisClient, id: string | null): Promise<string | null> {
  return id === null ? null : ((await vineyardNames(client, [id])).get(id) ?? id);
}
