import { hashToken } from '../auth/workerToken.js';
import { ValidationError } from '../domain/errors.js';
import type { RequestContext } from '../domain/audit.js';
import type { User } from '../domain/records.js';
import { systemScope } from '../ports/UnitOfWork.js';
import { recordAudit, recordSignIn } from './audit.js';
import { type CoreDeps, isoNow } from './CoreDeps.js';
import { findOrCreateUser, normalizeEmail } from './users.js';

/** What tells a sign-in link's token apart; 256 random bits follow. */
export const SIGN_IN_LINK_PREFIX = 'tsl_';
/** How long a link works unless told otherwise, and at most. */
export const SIGN_IN_LINK_DEFAULT_HOURS = 24;
export const SIGN_IN_LINK_MAX_HOURS = 7 * 24;
const SIGN_IN_LINK_PATTERN = /^tsl_[A-Za-z0-9_-]{43}$/;

export interface SignInInvitation {
  /** Shown once (the link carries it); only its SHA-256 is kept. */
  token: string;
  user: User;
  expires_at: string;
}

/**
 * One-time sign-in links for local and small installs (`trellis-server users invite EMAIL`): a
 * second person signs in without an OAuth app, like the administrator's bootstrap link, but the
 * link is kept in the database (so the serving replica honours one made by a command), works
 * once and expires.
 */
export class SignInLinkUseCases {
  constructor(private readonly deps: CoreDeps) {}

  async invite(input: { email: string; name?: string | null; hours?: number }): Promise<SignInInvitation> {
    const email = normalizeEmail(input.email);
    const hours = input.hours ?? SIGN_IN_LINK_DEFAULT_HOURS;
    if (!Number.isInteger(hours) || hours < 1 || hours > SIGN_IN_LINK_MAX_HOURS) {
      throw new ValidationError(`a sign-in link works for 1 to ${SIGN_IN_LINK_MAX_HOURS} hours`, [
        { path: 'hours', message: `must be a whole number from 1 to ${SIGN_IN_LINK_MAX_HOURS}` },
      ]);
    }
    const token = SIGN_IN_LINK_PREFIX + Buffer.from(this.deps.random.bytes(32)).toString('base64url');
    const now = this.deps.clock.now();
    const expires_at = new Date(now.getTime() + hours * 3_600_000).toISOString();
    const user = await this.deps.uow.run(systemScope, async (stores) => {
      const user = await findOrCreateUser(
        stores,
        { email, name: input.name ?? null },
        this.deps.random.uuid(),
        now.toISOString(),
      );
      // Links are only made here, so here is where old ones go: a week after they expired.
      await stores.signInLinks.deleteExpired(
        new Date(now.getTime() - SIGN_IN_LINK_MAX_HOURS * 3_600_000).toISOString(),
      );
      await stores.signInLinks.create({
        token_hash: hashToken(token),
        email,
        name: input.name?.trim() || null,
        created_at: now.toISOString(),
        expires_at,
        used_at: null,
      });
      await recordAudit(stores, this.deps, 'system', {
        action: 'user.invite',
        target: { type: 'user', id: user.id },
        owner_id: user.id,
        details: { email, expires_at },
      });
      return user;
    });
    return { token, user, expires_at };
  }

  /** The person a link signs in, spending it; null for a link that is unknown, used or expired. */
  async redeem(token: string, request?: RequestContext): Promise<User | null> {
    if (!SIGN_IN_LINK_PATTERN.test(token)) return null;
    return this.deps.uow.run(systemScope, async (stores) => {
      const at = isoNow(this.deps);
      const link = await stores.signInLinks.consume(hashToken(token), at);
      if (link === null) return null;
      const user = await findOrCreateUser(stores, { email: link.email, name: link.name }, this.deps.random.uuid(), at);
      await recordSignIn(stores, this.deps, user, 'link', request);
      return user;
    });
  }
}
