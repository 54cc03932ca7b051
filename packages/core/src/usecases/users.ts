import { ValidationError } from '../domain/errors.js';
import type { User } from '../domain/records.js';
import type { Stores } from '../ports/UnitOfWork.js';

const EMAIL = /^[^\s@]+@[^\s@]+$/;

/** Emails are compared trimmed and in lower case; anything without one `@` is refused. */
export function normalizeEmail(value: string): string {
  const email = value.trim().toLowerCase();
  if (!EMAIL.test(email)) throw new ValidationError('email is not valid', [{ path: 'email', message: 'invalid' }]);
  return email;
}

/**
 * The user with this (normalised) email, created with `id` when there is none. Invitations at this
 * email wait for the person to accept them (issue 23): nobody joins an organization by signing in.
 */
export async function findOrCreateUser(
  stores: Stores,
  input: { email: string; name?: string | null },
  id: string,
  now: string,
): Promise<User> {
  const existing = await stores.users.findByEmail(input.email);
  if (existing) return existing;
  const user = await stores.users.create({
    id,
    email: input.email,
    name: input.name?.trim() || input.email,
    created_at: now,
  });
  return user;
}
