import type { User } from '../domain/records.js';

export interface UserStore {
  /** `ConflictError('email_taken')` when the email is already used. */
  create(user: User): Promise<User>;
  get(id: string): Promise<User | null>;
  findByEmail(email: string): Promise<User | null>;
}
