import type { CloudIdentity, CloudIdentityStore, CloudProvider } from '@trellis/core';
import type { SqlSession } from '../dialects/Dialect.js';
import { type Row, textOut, uuidOut } from '../rows.js';

export class SqlCloudIdentityStore implements CloudIdentityStore {
  constructor(private readonly db: SqlSession) {}

  async create(identity: CloudIdentity): Promise<CloudIdentity> {
    const [row] = await this.db
      .insert('cloud_identities', {
        id: identity.id,
        owner_id: identity.owner_id,
        provider: identity.provider,
        role_arn: identity.role_arn,
        external_id: identity.external_id,
      })
      .returning('*');
    return toCloudIdentity(row);
  }

  async get(ownerId: string, id: string): Promise<CloudIdentity | null> {
    const row = await this.db.table('cloud_identities').where({ owner_id: ownerId, id }).first();
    return row ? toCloudIdentity(row) : null;
  }
}

function toCloudIdentity(row: Row): CloudIdentity {
  return {
    id: uuidOut(row.id),
    owner_id: uuidOut(row.owner_id),
    provider: textOut(row.provider) as CloudProvider,
    role_arn: textOut(row.role_arn),
    external_id: textOut(row.external_id),
  };
}
