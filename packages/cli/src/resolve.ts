import type { TrellisClient } from '@trellis/client';
import { isUuid } from '@trellis/core';
import type { VineyardDetailView as VineyardView } from '@trellis/client';
import { CliError } from './errors.js';

/** A vineyard named by id or by name (names are unique per user). */
export async function resolveVineyard(client: TrellisClient, nameOrId: string): Promise<VineyardView> {
  if (isUuid(nameOrId)) return client.getVineyard(nameOrId);
  for await (const vineyard of client.vineyards({ limit: 200 })) {
    if (vineyard.name === nameOrId) return client.getVineyard(vineyard.id);
  }
  throw new CliError(`no vineyard named "${nameOrId}" (\`trellis vineyards list\` shows yours)`);
}
