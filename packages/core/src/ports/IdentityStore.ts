import type { IdentityProvider } from '../domain/enums.js';
import type { Identity } from '../domain/records.js';

/** Links between a user and their accounts at the sign-in providers. */
export interface IdentityStore {
  /** Creates the link or refreshes its token and scopes. */
  upsert(identity: Identity): Promise<Identity>;
  find(provider: IdentityProvider, providerUserId: string): Promise<Identity | null>;
  listForUser(userId: string): Promise<Identity[]>;
}
