import type { RefreshTokenRecord, RefreshTokenStore } from '@trellis/core';
import type { SqlSession } from '../dialects/Dialect.js';
import { type Row, timeIn, timeInOrNull, timeOut, timeOutOrNull, uuidOut } from '../rows.js';

export class SqlRefreshTokenStore implements RefreshTokenStore {
  constructor(private readonly db: SqlSession) {}

  async create(record: RefreshTokenRecord): Promise<RefreshTokenRecord> {
    const [row] = await this.db
      .insert('refresh_tokens', {
        id: record.id,
        user_id: record.user_id,
        family_id: record.family_id,
        expires_at: timeIn(record.expires_at),
        rotated_at: timeInOrNull(record.rotated_at),
        revoked_at: timeInOrNull(record.revoked_at),
      })
      .returning('*');
    return toRefreshToken(row);
  }

  async get(id: string): Promise<RefreshTokenRecord | null> {
    const row = await this.db.table('refresh_tokens').where({ id }).first();
    return row ? toRefreshToken(row) : null;
  }

  /** Conditional, so of two concurrent refreshes with one token exactly one wins. */
  async markRotated(id: string, at: string): Promise<boolean> {
    const changed = await this.db
      .table('refresh_tokens')
      .where({ id })
      .whereNull('rotated_at')
      .update({ rotated_at: timeIn(at) });
    return changed > 0;
  }

  async revokeFamily(familyId: string, at: string): Promise<void> {
    await this.db
      .table('refresh_tokens')
      .where({ family_id: familyId })
      .whereNull('revoked_at')
      .update({ revoked_at: timeIn(at) });
  }
}

function toRefreshToken(row: Row): RefreshTokenRecord {
  return {
    id: uuidOut(row.id),
    user_id: uuidOut(row.user_id),
    family_id: uuidOut(row.family_id),
    expires_at: timeOut(row.expires_at),
    rotated_at: timeOutOrNull(row.rotated_at),
    revoked_at: timeOutOrNull(row.revoked_at),
  };
}
