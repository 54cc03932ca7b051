import type { SignInLink, SignInLinkStore } from '@trellis/core';
import type { SqlSession } from '../dialects/Dialect.js';
import { type Row, textOut, timeIn, timeOut, timeOutOrNull } from '../rows.js';

/** One-time sign-in links (m038): system work only; on Postgres the app role has no grant. */
export class SqlSignInLinkStore implements SignInLinkStore {
  constructor(private readonly db: SqlSession) {}

  private links() {
    if (this.db.scope.kind !== 'system') {
      throw new Error('permission denied: sign-in links are read and written by system work only');
    }
    return this.db.table('sign_in_links');
  }

  async create(link: SignInLink): Promise<void> {
    this.links();
    await this.db.insert('sign_in_links', {
      token_hash: link.token_hash,
      email: link.email,
      name: link.name,
      created_at: timeIn(link.created_at),
      expires_at: timeIn(link.expires_at),
      used_at: link.used_at === null ? null : timeIn(link.used_at),
    });
  }

  async consume(tokenHash: string, at: string): Promise<SignInLink | null> {
    // One statement: of two redemptions of the same link, the second updates nothing.
    const [row] = await this.links()
      .where('token_hash', tokenHash)
      .whereNull('used_at')
      .where('expires_at', '>', timeIn(at))
      .update({ used_at: timeIn(at) })
      .returning('*');
    return row ? toSignInLink(row) : null;
  }

  async deleteExpired(before: string): Promise<number> {
    return this.links().where('expires_at', '<', timeIn(before)).delete();
  }
}

function toSignInLink(row: Row): SignInLink {
  return {
    token_hash: textOut(row.token_hash),
    email: textOut(row.email),
    name: row.name === null ? null : textOut(row.name),
    created_at: timeOut(row.created_at),
    expires_at: timeOut(row.expires_at),
    used_at: timeOutOrNull(row.used_at),
  };
}
