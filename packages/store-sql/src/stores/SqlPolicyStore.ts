import {
  currentVersionOf,
  isOneOf,
  type OwnerIds,
  ownerList,
  type Page,
  type PageRequest,
  POLICY_ENFORCEMENTS,
  type Policy,
  type PolicyEnforcement,
  type PolicyStore,
  type PolicyVersion,
} from '@trellis/core';
import type { SqlSession } from '../dialects/Dialect.js';
import { integerOut, type Row, textOut, timeIn, timeOut, uuidOut, uuidOutOrNull } from '../rows.js';
import { keysetPage } from './keysetPage.js';

export class SqlPolicyStore implements PolicyStore {
  constructor(private readonly db: SqlSession) {}

  async create(policy: Policy): Promise<Policy> {
    const [row] = await this.db
      .insert('policies', {
        id: policy.id,
        owner_id: policy.owner_id,
        created_by: policy.created_by,
        org_id: policy.org_id,
        name: policy.name,
        enforcement: policy.enforcement,
        vineyard_id: policy.vineyard_id,
        version: policy.version,
        module: policy.module,
        created_at: timeIn(policy.created_at),
        updated_at: timeIn(policy.updated_at),
      })
      .returning('*');
    await this.insertVersion(currentVersionOf(policy));
    return toPolicy(row);
  }

  async find(id: string): Promise<Policy | null> {
    const row = await this.db.table('policies').where({ id }).first();
    return row ? toPolicy(row) : null;
  }

  async page(owners: OwnerIds, request: PageRequest): Promise<Page<Policy>> {
    return keysetPage(
      this.db.table('policies').whereIn('owner_id', ownerList(owners)),
      'created_at',
      request,
      toPolicy,
    );
  }

  async update(policy: Policy): Promise<Policy | null> {
    const current = await this.db
      .lockForUpdate(this.db.table('policies').where({ owner_id: policy.owner_id, id: policy.id }))
      .first();
    if (!current) return null;
    await this.insertVersion(currentVersionOf(policy));
    const [row] = await this.db
      .table('policies')
      .where({ owner_id: policy.owner_id, id: policy.id })
      .update({
        name: policy.name,
        enforcement: policy.enforcement,
        version: policy.version,
        module: policy.module,
        updated_at: timeIn(policy.updated_at),
      })
      .returning('*');
    return row ? toPolicy(row) : null;
  }

  async versions(ownerId: string, policyId: string): Promise<PolicyVersion[]> {
    const rows: Row[] = await this.db
      .table('policy_versions')
      .where({ owner_id: ownerId, policy_id: policyId })
      .orderBy('version');
    return rows.map(toVersion);
  }

  async delete(ownerId: string, id: string): Promise<boolean> {
    // Versions first: SQLite enforces the cascade only with foreign keys on.
    await this.db.table('policy_versions').where({ owner_id: ownerId, policy_id: id }).delete();
    return (await this.db.table('policies').where({ owner_id: ownerId, id }).delete()) > 0;
  }

  async listApplicable(ownerId: string, vineyardId: string | null): Promise<Policy[]> {
    const rows: Row[] = await this.db
      .table('policies')
      .where({ owner_id: ownerId })
      .andWhere((which) => {
        which.whereNull('vineyard_id');
        if (vineyardId !== null) which.orWhere('vineyard_id', vineyardId);
      })
      .orderBy([
        { column: 'created_at', order: 'asc' },
        { column: 'seq', order: 'asc' },
      ]);
    return rows.map(toPolicy);
  }

  private async insertVersion(version: PolicyVersion): Promise<void> {
    await this.db.insert('policy_versions', {
      owner_id: version.owner_id,
      policy_id: version.policy_id,
      version: version.version,
      name: version.name,
      enforcement: version.enforcement,
      module: version.module,
      created_by: version.created_by,
      created_at: timeIn(version.created_at),
    });
  }
}

function enforcementOut(value: unknown, table: string): PolicyEnforcement {
  const enforcement = textOut(value);
  if (!isOneOf(POLICY_ENFORCEMENTS, enforcement)) {
    throw new TypeError(`${table}.enforcement holds an unknown enforcement: ${enforcement}`);
  }
  return enforcement;
}

function toPolicy(row: Row): Policy {
  return {
    id: uuidOut(row.id),
    owner_id: uuidOut(row.owner_id),
    created_by: uuidOut(row.created_by),
    org_id: uuidOutOrNull(row.org_id),
    name: textOut(row.name),
    enforcement: enforcementOut(row.enforcement, 'policies'),
    vineyard_id: uuidOutOrNull(row.vineyard_id),
    version: integerOut(row.version),
    module: textOut(row.module),
    created_at: timeOut(row.created_at),
    updated_at: timeOut(row.updated_at),
  };
}

function toVersion(row: Row): PolicyVersion {
  return {
    policy_id: uuidOut(row.policy_id),
    owner_id: uuidOut(row.owner_id),
    version: integerOut(row.version),
    name: textOut(row.name),
    enforcement: enforcementOut(row.enforcement, 'policy_versions'),
    module: textOut(row.module),
    created_by: uuidOut(row.created_by),
    created_at: timeOut(row.created_at),
  };
}
