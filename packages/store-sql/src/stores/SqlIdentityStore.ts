import type { Identity, IdentityProvider, IdentityStore } from '@trellis/core';
import type { SqlSession } from '../dialects/Dialect.js';
import { type Row, textOut, textOutOrNull, uuidOut } from '../rows.js';

export class SqlIdentityStore implements IdentityStore {
  constructor(private readonly db: SqlSession) {}

  /** The link keeps the user it was made for; a new sign-in only refreshes token and scopes. */
  async upsert(identity: Identity): Promise<Identity> {
    const [row] = await this.db
      .insert('identities', {
        user_id: identity.user_id,
        provider: identity.provider,
        provider_user_id: identity.provider_user_id,
        provider_token: identity.provider_token,
        scopes: identity.scopes,
      })
      .onConflict(['provider', 'provider_user_id'])
      .merge(['provider_token', 'scopes'])
      .returning('*');
    // No row: the link exists for another user, whom this owner-scoped unit of work cannot touch.
    if (!row) throw new Error('an owner-scoped unit of work tried to update the identity link of another user');
    return toIdentity(row);
  }

  async find(provider: IdentityProvider, providerUserId: string): Promise<Identity | null> {
    const row = await this.db.table('identities').where({ provider, provider_user_id: providerUserId }).first();
    return row ? toIdentity(row) : null;
  }

  async listForUser(userId: string): Promise<Identity[]> {
    const rows: Row[] = await this.db
      .table('identities')
      .where({ user_id: userId })
      .orderBy([{ column: 'provider' }, { column: 'provider_user_id' }]);
    return rows.map(toIdentity);
  }
}

function toIdentity(row: Row): Identity {
  return {
    user_id: uuidOut(row.user_id),
    provider: textOut(row.provider) as IdentityProvider,
    provider_user_id: textOut(row.provider_user_id),
    provider_token: textOutOrNull(row.provider_token),
    scopes: textOut(row.scopes),
  };
}
