import type { User, UserStore } from '@trellis/core';
import type { SqlSession } from '../dialects/Dialect.js';
import { type Row, textOut, timeIn, timeOut, uuidOut } from '../rows.js';

export class SqlUserStore implements UserStore {
  constructor(private readonly db: SqlSession) {}

  async create(user: User): Promise<User> {
    const [row] = await this.db.recoverable((db) =>
      db
        .insert('users', { id: user.id, email: user.email, name: user.name, created_at: timeIn(user.created_at) })
        .returning('*'),
    );
    return toUser(row);
  }

  async get(id: string): Promise<User | null> {
    const row = await this.db.table('users').where({ id }).first();
    return row ? toUser(row) : null;
  }

  async findByEmail(email: string): Promise<User | null> {
    const row = await this.db.table('users').where({ email }).first();
    return row ? toUser(row) : null;
  }
}

function toUser(row: Row): User {
  return {
    id: uuidOut(row.id),
    email: textOut(row.email),
    name: textOut(row.name),
    created_at: timeOut(row.created_at),
  };
}
