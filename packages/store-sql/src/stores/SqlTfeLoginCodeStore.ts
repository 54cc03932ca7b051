import type { TfeLoginCode, TfeLoginCodeStore } from '@trellis/core';
import type { SqlSession } from '../dialects/Dialect.js';
import { type Row, textOut, timeIn, timeOut, timeOutOrNull, uuidOut } from '../rows.js';

/** `tofu login` authorization codes (m034): system work only; on Postgres the app role has no grant. */
export class SqlTfeLoginCodeStore implements TfeLoginCodeStore {
  constructor(private readonly db: SqlSession) {}

  private codes() {
    if (this.db.scope.kind !== 'system') {
      throw new Error('permission denied: login codes are read and written by system work only');
    }
    return this.db.table('tfe_authorization_codes');
  }

  async save(code: TfeLoginCode): Promise<void> {
    this.codes();
    await this.db.insert('tfe_authorization_codes', {
      code_hash: code.code_hash,
      user_id: code.user_id,
      client_id: code.client_id,
      redirect_uri: code.redirect_uri,
      code_challenge: code.code_challenge,
      created_at: timeIn(code.created_at),
      expires_at: timeIn(code.expires_at),
      consumed_at: code.consumed_at === null ? null : timeIn(code.consumed_at),
    });
  }

  async consume(codeHash: string, at: string): Promise<TfeLoginCode | null> {
    const row = await this.codes().where({ code_hash: codeHash }).first();
    if (!row) return null;
    const before = toCode(row);
    if (before.consumed_at === null) {
      const taken = await this.codes()
        .where({ code_hash: codeHash })
        .whereNull('consumed_at')
        .update({ consumed_at: timeIn(at) });
      // Another redemption took it between the read and the update: this one is the second.
      if (taken === 0) return { ...before, consumed_at: at };
    }
    return before;
  }

  async deleteExpired(before: string): Promise<number> {
    return this.codes().where('expires_at', '<', timeIn(before)).delete();
  }
}

function toCode(row: Row): TfeLoginCode {
  return {
    code_hash: textOut(row.code_hash),
    user_id: uuidOut(row.user_id),
    client_id: textOut(row.client_id),
    redirect_uri: textOut(row.redirect_uri),
    code_challenge: textOut(row.code_challenge),
    created_at: timeOut(row.created_at),
    expires_at: timeOut(row.expires_at),
    consumed_at: timeOutOrNull(row.consumed_at),
  };
}
