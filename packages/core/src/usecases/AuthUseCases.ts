import type { RequestContext } from '../domain/audit.js';
import type { UserActor } from '../domain/actors.js';
import { UnauthorizedError, ValidationError } from '../domain/errors.js';
import type { CliLogin, Identity, User } from '../domain/records.js';
import { requireUuid } from '../domain/validation.js';
import { tokenClaims } from '../auth/tokenLifetimes.js';
import {
  MAX_VERIFICATION_ATTEMPTS,
  VERIFICATION_CODE_TTL_SECONDS,
  generateVerificationCode,
  verificationCodesMatch,
} from '../auth/verificationCode.js';
import { ownerScope, type Stores, systemScope } from '../ports/UnitOfWork.js';
import { recordAudit, recordSignIn } from './audit.js';
import { type CoreDeps, isoNow } from './CoreDeps.js';
import { openProviderTokens } from './providerTokens.js';
import { findOrCreateUser, normalizeEmail } from './users.js';

export interface TokenPair {
  access_token: string;
  refresh_token: string;
}

export interface ExchangeResult extends TokenPair {
  provider_token: string | null;
  user_email: string;
}

/**
 * Whether the instant `time` is at or before `now`. Compared as instants, not as text: a store may
 * return any ISO-8601 form (`…:00Z` sorts after `…:00.500Z` as a string). Unreadable counts as passed.
 */
function hasPassed(time: string, now: string): boolean {
  return !(Date.parse(time) > Date.parse(now));
}

/** Users, device login (SPEC §5.3), CLI token rotation and its reuse detection. */
export class AuthUseCases {
  constructor(private readonly deps: CoreDeps) {}

  /**
   * The user with this email, created on first sign-in. With `signIn` (a web sign-in such as the
   * bootstrap link) the sign-in is recorded in the audit log.
   */
  async ensureUser(
    input: { email: string; name?: string },
    signIn?: { method: string; request?: RequestContext },
  ): Promise<User> {
    const email = normalizeEmail(input.email);
    return this.deps.uow.run(systemScope, async (stores) => {
      const user = await findOrCreateUser(
        stores,
        { email, name: input.name ?? null },
        this.deps.random.uuid(),
        isoNow(this.deps),
      );
      if (signIn) await recordSignIn(stores, this.deps, user, signIn.method, signIn.request);
      return user;
    });
  }

  /** `POST /auth/signout`: the web session ends (the cookie is cleared by the HTTP layer). */
  async recordSignOut(user: UserActor): Promise<void> {
    await this.deps.uow.run(ownerScope(user.userId), (stores) =>
      recordAudit(stores, this.deps, user, {
        action: 'session.sign_out',
        target: { type: 'user', id: user.userId },
        owner_id: user.userId,
      }),
    );
  }

  async getUser(userId: string): Promise<User | null> {
    return this.deps.uow.read(ownerScope(userId), (stores) => stores.users.get(userId));
  }

  /**
   * The browser approves a CLI: records the device code with a fresh verification code, and the
   * provider the web session signed in with (whose token the exchange hands to the CLI).
   */
  async generateCliLogin(
    user: UserActor,
    deviceCode: unknown,
  ): Promise<{ verification_code: string; expires_at: string }> {
    const device_code = requireUuid(deviceCode, 'device_code');
    const now = this.deps.clock.now();
    const login: CliLogin = {
      device_code,
      verification_code: generateVerificationCode(this.deps.random),
      profile_id: user.userId,
      provider: user.provider ?? null,
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + VERIFICATION_CODE_TTL_SECONDS * 1000).toISOString(),
      attempts: 0,
      consumed_at: null,
    };
    await this.deps.uow.run(ownerScope(user.userId), async (stores) => {
      await stores.cliLogins.create(login);
      // The device code is a credential until exchanged: the entry names the login by the user only.
      await recordAudit(stores, this.deps, user, {
        action: 'cli_login.approve',
        target: { type: 'user', id: user.userId },
        owner_id: user.userId,
        details: { expires_at: login.expires_at },
      });
    });
    return { verification_code: login.verification_code, expires_at: login.expires_at };
  }

  /**
   * The CLI trades device code + verification code for tokens. A wrong code counts against the
   * login even though the call fails, so the count is committed before the error is thrown.
   */
  async exchangeCliLogin(input: { device_code: unknown; verification_code: unknown }): Promise<ExchangeResult> {
    const deviceCode = requireUuid(input.device_code, 'device_code');
    if (typeof input.verification_code !== 'string' || input.verification_code.trim() === '') {
      throw new ValidationError('verification_code is required', [
        { path: 'verification_code', message: 'must be the 6-character code shown in the browser' },
      ]);
    }
    const code = input.verification_code;
    type Outcome =
      | { result: ExchangeResult; identity: Identity | null }
      | { error: 'authorization_pending' | 'used' | 'dead' | 'expired_token' }
      | { error: 'wrong'; remaining: number };
    const outcome = await this.deps.uow.run(systemScope, async (stores): Promise<Outcome> => {
      const login = await stores.cliLogins.findForUpdate(deviceCode);
      const now = isoNow(this.deps);
      if (!login || login.profile_id === null) return { error: 'authorization_pending' };
      if (login.consumed_at !== null) return { error: 'used' };
      if (login.attempts >= MAX_VERIFICATION_ATTEMPTS) return { error: 'dead' };
      if (hasPassed(login.expires_at, now)) return { error: 'expired_token' };
      if (!verificationCodesMatch(login.verification_code, code)) {
        const attempts = await stores.cliLogins.recordFailedAttempt(deviceCode);
        return { error: 'wrong' as const, remaining: Math.max(0, MAX_VERIFICATION_ATTEMPTS - attempts) };
      }
      if (!(await stores.cliLogins.consume(deviceCode, now))) return { error: 'used' };
      const user = await stores.users.get(login.profile_id);
      if (!user) return { error: 'dead' };
      const identities = login.provider === null ? [] : await stores.identities.listForUser(user.id);
      const identity = identities.find((candidate) => candidate.provider === login.provider) ?? null;
      const tokens = await this.issueTokens(stores, user, this.deps.random.uuid());
      return { result: { ...tokens, provider_token: null, user_email: user.email }, identity };
    });
    if ('result' in outcome) {
      return { ...outcome.result, provider_token: await this.openProviderToken(outcome.identity) };
    }
    switch (outcome.error) {
      case 'authorization_pending':
        throw new ValidationError(
          'this device code has not been approved in the browser yet',
          [],
          'authorization_pending',
        );
      case 'expired_token':
        throw new ValidationError('the verification code has expired; run the login again', [], 'expired_token');
      case 'used':
        throw new ValidationError('this login was already used; run the login again', [], 'invalid_grant');
      case 'dead':
        throw new ValidationError('too many wrong codes; run the login again', [], 'invalid_grant');
      case 'wrong':
        throw new ValidationError(
          outcome.remaining > 0
            ? `wrong verification code (${outcome.remaining} ${outcome.remaining === 1 ? 'attempt' : 'attempts'} left)`
            : 'wrong verification code; too many attempts, run the login again',
          [],
          'invalid_grant',
        );
      default: {
        const unreachable: never = outcome;
        return unreachable;
      }
    }
  }

  /**
   * Rotates both tokens. Presenting a refresh token that was already rotated means it was
   * copied: the whole family is revoked (committed) and the call fails.
   */
  async refresh(refreshToken: unknown): Promise<TokenPair> {
    const claims = this.verifyRefreshToken(refreshToken);
    type Outcome = { tokens: TokenPair } | { error: 'invalid' | 'reused' };
    const outcome = await this.deps.uow.run(systemScope, async (stores): Promise<Outcome> => {
      const record = await stores.refreshTokens.get(claims.jti);
      const now = isoNow(this.deps);
      if (!record || record.user_id !== claims.sub || record.revoked_at !== null || hasPassed(record.expires_at, now)) {
        return { error: 'invalid' };
      }
      if (record.rotated_at !== null || !(await stores.refreshTokens.markRotated(record.id, now))) {
        await stores.refreshTokens.revokeFamily(record.family_id, now);
        return { error: 'reused' };
      }
      const user = await stores.users.get(record.user_id);
      if (!user) return { error: 'invalid' };
      return { tokens: await this.issueTokens(stores, user, record.family_id) };
    });
    if ('tokens' in outcome) return outcome.tokens;
    throw new UnauthorizedError(
      'invalid_grant',
      outcome.error === 'reused'
        ? 'this refresh token was already used; every session of this login is revoked, run the login again'
        : 'the refresh token is not valid; run the login again',
    );
  }

  /** Revokes the refresh token's whole family (CLI logout). Idempotent. */
  async revoke(refreshToken: unknown, request?: RequestContext): Promise<void> {
    const claims = this.verifyRefreshToken(refreshToken);
    await this.deps.uow.run(systemScope, async (stores) => {
      const record = await stores.refreshTokens.get(claims.jti);
      if (record && record.user_id === claims.sub) {
        await stores.refreshTokens.revokeFamily(record.family_id, isoNow(this.deps));
        const user = await stores.users.get(record.user_id);
        const actor: UserActor = { userId: record.user_id, email: user?.email ?? '', request };
        await recordAudit(stores, this.deps, actor, {
          action: 'cli.logout',
          target: { type: 'user', id: record.user_id },
          owner_id: record.user_id,
        });
      }
    });
  }

  /** The user behind a CLI access token; refresh tokens are refused. */
  authenticateAccessToken(token: string): UserActor {
    const claims = this.deps.signer.verify(token, 'access');
    return { userId: claims.sub, email: claims.email };
  }

  /**
   * SPEC §4.1: the CLI gets the token of the provider the browser signed in with. A token that no
   * longer opens (the encryption key changed) is no token: the login itself still succeeds.
   */
  private async openProviderToken(identity: Identity | null): Promise<string | null> {
    if (!identity?.provider_token) return null;
    try {
      return (await openProviderTokens(this.deps.secrets, { ...identity, provider_token: identity.provider_token }))
        .accessToken;
    } catch {
      return null;
    }
  }

  private verifyRefreshToken(token: unknown): { sub: string; jti: string } {
    if (typeof token !== 'string' || token === '') {
      throw new ValidationError('refresh_token is required', [{ path: 'refresh_token', message: 'required' }]);
    }
    const claims = this.deps.signer.verify(token, 'refresh');
    if (!claims.jti) throw new UnauthorizedError('invalid_grant', 'the refresh token is not valid');
    return { sub: claims.sub, jti: claims.jti };
  }

  private async issueTokens(stores: Stores, user: User, familyId: string): Promise<TokenPair> {
    const now = this.deps.clock.now();
    const jti = this.deps.random.uuid();
    const refreshClaims = tokenClaims('refresh', user, now, { jti, fam: familyId });
    await stores.refreshTokens.create({
      id: jti,
      user_id: user.id,
      family_id: familyId,
      expires_at: new Date(refreshClaims.exp * 1000).toISOString(),
      rotated_at: null,
      revoked_at: null,
    });
    return {
      access_token: this.deps.signer.sign(tokenClaims('access', user, now)),
      refresh_token: this.deps.signer.sign(refreshClaims),
    };
  }
}
