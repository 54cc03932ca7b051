import { ConflictError, type User, type UserStore } from '@trellis/core';
import { copy } from '../MemoryState.js';
import type { MemoryTransaction } from '../MemoryTransaction.js';

export class MemoryUserStore implements UserStore {
  constructor(private readonly tx: MemoryTransaction) {}

  async create(user: User): Promise<User> {
    const { users } = this.tx.state;
    this.tx.checkWrite('users', user.id);
    if ([...users.values()].some((existing) => existing.email === user.email)) {
      throw new ConflictError('email_taken', 'a user with this email already exists');
    }
    if (users.has(user.id)) throw new ConflictError('user_exists', 'a user with this id already exists');
    users.set(user.id, copy(user));
    return copy(user);
  }

  async get(id: string): Promise<User | null> {
    const user = this.tx.state.users.get(id);
    return user && this.tx.sees(user.id) ? copy(user) : null;
  }

  async findByEmail(email: string): Promise<User | null> {
    for (const user of this.tx.state.users.values()) {
      if (user.email === email && this.tx.sees(user.id)) return copy(user);
    }
    return null;
  }
}
