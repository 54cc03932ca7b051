import { SIGNING_ALGORITHMS, type SigningAlgorithm, type SigningKey, type SigningKeyStore } from '@trellis/core';
import type { SqlSession } from '../dialects/Dialect.js';
import { jsonIn, jsonOut, type Row, textOut, timeIn, timeOut, timeOutOrNull } from '../rows.js';

/** The OIDC issuer's keys (m017): system work only; on Postgres the app role has no grant. */
export class SqlSigningKeyStore implements SigningKeyStore {
  constructor(private readonly db: SqlSession) {}

  private keys() {
    if (this.db.scope.kind !== 'system') {
      throw new Error('permission denied: signing keys are read and written by system work only');
    }
    return this.db.table('signing_keys');
  }

  async create(key: SigningKey): Promise<SigningKey> {
    this.keys();
    const [row] = await this.db
      .insert('signing_keys', {
        id: key.id,
        algorithm: key.algorithm,
        public_jwk: jsonIn(key.public_jwk),
        private_key_sealed: key.private_key_sealed,
        created_at: timeIn(key.created_at),
        retired_at: key.retired_at === null ? null : timeIn(key.retired_at),
        published_until: key.published_until === null ? null : timeIn(key.published_until),
        slot: key.retired_at === null ? 'current' : null,
      })
      .returning('*');
    return toSigningKey(row);
  }

  async current(): Promise<SigningKey | null> {
    const row = await this.keys()
      .whereNull('retired_at')
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .first();
    return row ? toSigningKey(row) : null;
  }

  async listPublished(now: string): Promise<SigningKey[]> {
    const rows = await this.keys()
      .where((q) => q.whereNull('retired_at').orWhere('published_until', '>', timeIn(now)))
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ]);
    return rows.map(toSigningKey);
  }

  async retireOthers(keepId: string, at: string, publishedUntil: string): Promise<number> {
    return this.keys()
      .whereNull('retired_at')
      .whereNot('id', keepId)
      .update({ retired_at: timeIn(at), published_until: timeIn(publishedUntil), slot: null });
  }

  async deleteExpired(now: string): Promise<number> {
    return this.keys().whereNotNull('retired_at').where('published_until', '<=', timeIn(now)).delete();
  }
}

function toSigningKey(row: Row): SigningKey {
  const algorithm = textOut(row.algorithm);
  if (!(SIGNING_ALGORITHMS as readonly string[]).includes(algorithm)) {
    throw new TypeError(`unknown signing algorithm ${algorithm}`);
  }
  return {
    id: textOut(row.id),
    algorithm: algorithm as SigningAlgorithm,
    public_jwk: jsonOut(row.public_jwk),
    private_key_sealed: textOut(row.private_key_sealed),
    created_at: timeOut(row.created_at),
    retired_at: timeOutOrNull(row.retired_at),
    published_until: timeOutOrNull(row.published_until),
  };
}
