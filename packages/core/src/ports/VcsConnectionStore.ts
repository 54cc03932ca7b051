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
   * System work (a webhook's URL names the vine, and no owner until its signature is checked):
   * the connection of this vine, whoever owns it; null when it has none.
   */
  findForDelivery(vineId: string): Promise<VcsConnection | null>;
  /** How many of the owner's connections have a manual webhook (counted against a limit). */
  countManual(ownerId: string): Promise<number>;
  /**
   * System work: remembers a delivery key (a delivery id, or the hash of a signed body); false
   * when it was recorded before (a redelivery, or a replay). Nothing forgets keys today; if a
   * retention task ever prunes them, auto-deploy's ancestry rule still refuses an old commit.
   */
  recordDelivery(provider: GitProvider, deliveryId: string, at: string): Promise<boolean>;
}
