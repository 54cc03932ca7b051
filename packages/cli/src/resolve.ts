import type { TrellisClient } from '@trellis/client';
import { isUuid, type VineyardView } from '@trellis/core';
import { CliError } from './errors.js';

/** A vineyard named by id or by name (names are unique per user). */
export async function resolveVineyard(client: TrellisClient, nameOrId: string): Promise<VineyardView> {
  if (isUuid(nameOrId)) return client.getVineyard(nameOrId);
  const found = (await client.listVineyards()).find((vineyard) => vineyard.name === nameOrId);
  if (!found) throw new CliError(`no vineyard named "${nameOrId}" (\`trellis vineyards list\` shows yours)`);
  return found;
}
