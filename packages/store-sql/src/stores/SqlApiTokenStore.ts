import { type ApiToken, type ApiTokenStore, isOrgRole, type Page, type PageRequest, type User } from '@trellis/core';
import type { SqlSession } from '../dialects/Dialect.js';
import {
  type Row,
  textOut,
  textOutOrNull,
  timeIn,
  timeInOrNull,
  timeOut,
  timeOutOrNull,
  uuidOut,
  uuidOutOrNull,
} from '../rows.js';
import { keysetPage } from './keysetPage.js';

export class SqlApiTokenStore implements ApiTokenStore {
  constructor(private readonly db: SqlSession) {}

  async create(token: ApiToken): Promise<ApiToken> {
    const [row] = await this.db
      .insert('api_tokens', {
        id: token.id,
        owner_id: token.owner_id,
        created_by: token.created_by,
        org_id: token.org_id,
        name: token.name,
        role: token.role,
        token_hash: token.token_hash,
        created_at: timeIn(token.created_at),
        expires_at: timeInOrNull(token.expires_at),
        last_used_at: timeInOrNull(token.last_used_at),
        revoked_at: timeInOrNull(token.revoked_at),
      })
      .returning('*');
    return toApiToken(row);
  }

  async findByHash(tokenHash: string): Promise<ApiToken | null> {
    const row = await this.db.table('api_tokens').where({ token_hash: tokenHash }).first();
    return row ? toApiToken(row) : null;
  }

  /** A left join on the creator: the token's row and its creator's, in one statement. */
  async findByHashWithCreator(tokenHash: string): Promise<{ token: ApiToken; creator: User | null } | null> {
    const row: Row | undefined = await this.db
      .table('api_tokens')
      .leftJoin('users', 'users.id', 'api_tokens.created_by')
      .where('api_tokens.token_hash', tokenHash)
      .first(
        'api_tokens.*',
        'users.id as creator_id',
        'users.email as creator_email',
        'users.name as creator_name',
        'users.created_at as creator_created_at',
      );
    if (!row) return null;
    const creator =
      row.creator_id === null || row.creator_id === undefined
        ? null
        : {
            id: uuidOut(row.creator_id),
            email: textOut(row.creator_email),
            name: textOut(row.creator_name),
            created_at: timeOut(row.creator_created_at),
          };
    return { token: toApiToken(row), creator };
  }

  async find(id: string): Promise<ApiToken | null> {
    const row = await this.db.table('api_tokens').where({ id }).first();
    return row ? toApiToken(row) : null;
  }

  async page(ownerId: string, request: PageRequest): Promise<Page<ApiToken>> {
    return keysetPage(
      this.db.table('api_tokens').where({ owner_id: ownerId }).whereNull('revoked_at'),
      'created_at',
      request,
      toApiToken,
    );
  }

  async revoke(ownerId: string, id: string, at: string): Promise<boolean> {
    const changed = await this.db
      .table('api_tokens')
      .where({ owner_id: ownerId, id })
      .whereNull('revoked_at')
      .update({ revoked_at: timeIn(at) });
    return changed > 0;
  }

  /** Conditional, so of many concurrent uses of one token at most one writes per interval. */
  async recordUse(id: string, at: string, notBefore: string): Promise<boolean> {
    const changed = await this.db
      .table('api_tokens')
      .where({ id })
      .where((stale) => stale.whereNull('last_used_at').orWhere('last_used_at', '<', timeIn(notBefore)))
      .update({ last_used_at: timeIn(at) });
    return changed > 0;
  }
}

function toApiToken(row: Row): ApiToken {
  const role = textOutOrNull(row.role);
  if (role !== null && !isOrgRole(role)) throw new TypeError(`api_tokens.role holds an unknown role: ${role}`);
  return {
    id: uuidOut(row.id),
    owner_id: uuidOut(row.owner_id),
    created_by: uuidOut(row.created_by),
    org_id: uuidOutOrNull(row.org_id),
    name: textOut(row.name),
    role,
    token_hash: textOut(row.token_hash),
    created_at: timeOut(row.created_at),
    expires_at: timeOutOrNull(row.expires_at),
    last_used_at: timeOutOrNull(row.last_used_at),
    revoked_at: timeOutOrNull(row.revoked_at),
  };
}
