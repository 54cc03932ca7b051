import type { GitProvider } from '../domain/enums.js';
import type { VcsConnection } from '../domain/vcs.js';

/**
 * Vines' repository connections and the webhook deliveries already handled (issue 13).
 * Connections belong to the vine's owner; deleting the vine deletes its connection.
 */
export interface VcsConnectionStore {
  /** Creates or replaces the vine's connection. */
  put(connection: VcsConnection): Promise<VcsConnection>;
  get(ownerId: string, vineId: string): Promise<VcsConnection | null>;
  /** False when the vine had none. */
  delete(ownerId: string, vineId: string): Promise<boolean>;
  /**
   * System work (a webhook names no owner until its signature is checked): every connection of
   * this repository at this provider, whoever owns it. `repository` compares case-insensitively.
   */
  listForRepository(provider: GitProvider, repository: string): Promise<VcsConnection[]>;
  /**
   * System work: remembers a delivery id; false when it was recorded before (a redelivery).
   * Ids older than the retention are pruned with the rest of the retention work.
   */
  recordDelivery(provider: GitProvider, deliveryId: string, at: string): Promise<boolean>;
}
