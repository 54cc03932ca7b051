import type { CloudIdentity, CloudIdentityStore, JsonObject } from '@trellis/core';
import type { SqlSession } from '../dialects/Dialect.js';
import { jsonIn, jsonOut, type Row, textOut, uuidOut } from '../rows.js';

/**
 * Cloud identities (m001, m017): `kind` and `provider` in columns, an AWS role in `role_arn`, the
 * external id of `assume_role` in `external_id`, the rest of an `oidc` identity in `settings`.
 */
export class SqlCloudIdentityStore implements CloudIdentityStore {
  constructor(private readonly db: SqlSession) {}

  async create(identity: CloudIdentity): Promise<CloudIdentity> {
    const { id, owner_id, kind, provider, ...rest } = identity;
    const roleArn = 'role_arn' in rest ? rest.role_arn : '';
    const externalId = 'external_id' in rest ? rest.external_id : '';
    const settings: Record<string, unknown> = { ...rest };
    delete settings.role_arn;
    delete settings.external_id;
    const [row] = await this.db
      .insert('cloud_identities', {
        id,
        owner_id,
        provider,
        role_arn: roleArn,
        external_id: externalId,
        // m017's columns only when they differ from their defaults (what an assume_role identity reads as).
        ...(kind === 'assume_role' ? {} : { kind, settings: jsonIn(settings) }),
      })
      .returning('*');
    return toCloudIdentity(row);
  }

  async get(ownerId: string, id: string): Promise<CloudIdentity | null> {
    const row = await this.db.table('cloud_identities').where({ owner_id: ownerId, id }).first();
    return row ? toCloudIdentity(row) : null;
  }
}

export function toCloudIdentity(row: Row): CloudIdentity {
  const base = { id: uuidOut(row.id), owner_id: uuidOut(row.owner_id) };
  const kind = row.kind === undefined ? 'assume_role' : textOut(row.kind);
  const provider = textOut(row.provider);
  const roleArn = textOut(row.role_arn);
  if (kind === 'assume_role') {
    return { ...base, kind: 'assume_role', provider: 'aws', role_arn: roleArn, external_id: textOut(row.external_id) };
  }
  const settings = jsonOut<JsonObject>(row.settings);
  const text = (name: string) => (typeof settings[name] === 'string' ? (settings[name] as string) : null);
  const audience = text('audience');
  switch (provider) {
    case 'aws':
      return {
        ...base,
        kind: 'oidc',
        provider: 'aws',
        role_arn: roleArn,
        audience,
        session_duration: typeof settings.session_duration === 'number' ? settings.session_duration : null,
      };
    case 'gcp':
      return {
        ...base,
        kind: 'oidc',
        provider: 'gcp',
        workload_identity_provider: text('workload_identity_provider') ?? '',
        service_account_email: text('service_account_email'),
        audience,
      };
    case 'azure':
      return {
        ...base,
        kind: 'oidc',
        provider: 'azure',
        tenant_id: text('tenant_id') ?? '',
        client_id: text('client_id') ?? '',
        audience,
      };
    default:
      throw new TypeError(`unknown cloud provider ${provider}`);
  }
}
