import type { RequestContext } from '../domain/audit.js';
import { recordSignIn } from './audit.js';
import { timingSafeEqual } from 'node:crypto';
import { isSafeNextPath } from '../auth/nextPath.js';
import { IDENTITY_PROVIDERS, type IdentityProvider, isOneOf, PROVIDER_NAMES } from '../domain/enums.js';
import { ConflictError, ForbiddenError, NotFoundError, UnauthorizedError, ValidationError } from '../domain/errors.js';
import type { User } from '../domain/records.js';
import type { SignInProvider } from '../ports/SignInProvider.js';
import { systemScope } from '../ports/UnitOfWork.js';
import { type CoreDeps, isoNow } from './CoreDeps.js';
import { expiresAtFrom, sealProviderTokens } from './providerTokens.js';
import { findOrCreateUser, normalizeEmail } from './users.js';

/** How long the browser has between leaving for the provider and coming back. */
const SIGN_IN_TTL_SECONDS = 10 * 60;

/** A sign-in on its way through the provider; the browser keeps it (signed) until the callback. */
export interface PendingSignIn {
  provider: IdentityProvider;
  /** `<provider>.<random>`: one-time, and names the provider it was issued for. */
  state: string;
  codeVerifier: string;
  nonce: string;
  /** Same-origin path to land on afterwards. */
  next: string;
  expiresAt: string;
}

export interface ConfiguredProvider {
  id: IdentityProvider;
  name: string;
}

export interface SignInResult {
  user: User;
  provider: IdentityProvider;
  next: string;
}

/** `next` as a path on this origin (default `/`), by `isSafeNextPath`; a 400 `invalid_next` otherwise. */
export function safeNextPath(value: unknown): string {
  if (value === undefined || value === null || value === '') return '/';
  if (!isSafeNextPath(value)) {
    throw new ValidationError(
      'next must be a path on this site, such as /cli/login',
      [{ path: 'next', message: 'must be a same-origin path' }],
      'invalid_next',
    );
  }
  return value;
}

function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * Web sign-in with an OAuth 2.0 / OpenID Connect provider (SPEC §5.2): the authorization request
 * and, at the callback, the checks (state, provider binding, expiry), the code exchange, the user
 * and its identity link, and the provider token sealed at rest.
 */
export class SignInUseCases {
  constructor(private readonly deps: CoreDeps) {}

  /** The configured providers, in the order of the sign-in page. */
  providers(): ConfiguredProvider[] {
    return IDENTITY_PROVIDERS.flatMap((id) => {
      const provider = this.deps.providers.signIn[id];
      return provider ? [{ id, name: provider.displayName }] : [];
    });
  }

  async start(
    provider: unknown,
    next: unknown,
    redirectUri: string,
  ): Promise<{ authorizationUrl: string; pending: PendingSignIn }> {
    const { id, adapter } = this.provider(provider);
    const pending: PendingSignIn = {
      provider: id,
      state: `${id}.${this.randomText(32)}`,
      codeVerifier: this.randomText(32),
      nonce: this.randomText(24),
      next: safeNextPath(next),
      expiresAt: new Date(this.deps.clock.now().getTime() + SIGN_IN_TTL_SECONDS * 1000).toISOString(),
    };
    const authorizationUrl = await adapter.authorizationUrl({
      redirectUri,
      state: pending.state,
      codeVerifier: pending.codeVerifier,
      nonce: pending.nonce,
    });
    return { authorizationUrl, pending };
  }

  /**
   * The provider sent the browser back. `pending` is what `start` handed to this browser (null
   * when it has none); `parameters` is the callback's query.
   */
  async complete(
    pending: PendingSignIn | null,
    parameters: Readonly<Record<string, string>>,
    redirectUri: string,
    request?: RequestContext,
  ): Promise<SignInResult> {
    const state = parameters.state;
    if (!pending || !state || Date.parse(pending.expiresAt) <= this.deps.clock.now().getTime()) {
      throw new UnauthorizedError(
        'invalid_state',
        'this sign-in has expired or was started in another browser; start it again',
      );
    }
    const stateProvider = state.slice(0, state.indexOf('.'));
    if (stateProvider !== pending.provider) {
      throw new UnauthorizedError(
        'provider_mismatch',
        `this answer belongs to a sign-in with another provider, not ${PROVIDER_NAMES[pending.provider]}; start again`,
      );
    }
    if (!sameSecret(state, pending.state)) {
      throw new UnauthorizedError('invalid_state', 'this sign-in answer does not belong to this browser; start again');
    }
    const name = PROVIDER_NAMES[pending.provider];
    if (parameters.error) {
      if (parameters.error === 'access_denied') {
        throw new UnauthorizedError('access_denied', `the sign-in was cancelled at ${name}`);
      }
      throw new UnauthorizedError('provider_error', `${name} refused the sign-in (${parameters.error.slice(0, 100)})`);
    }
    if (!parameters.code) throw new UnauthorizedError('provider_error', `${name} sent no authorization code`);
    const { adapter } = this.provider(pending.provider);
    const profile = await adapter.exchangeCode({
      redirectUri,
      state: pending.state,
      codeVerifier: pending.codeVerifier,
      nonce: pending.nonce,
      parameters,
    });
    if (!profile.email || !profile.emailVerified) {
      throw new ForbiddenError(
        'email_not_verified',
        `${name} has no verified email address for this account; verify one at ${name}, then sign in again`,
      );
    }
    const email = normalizeEmail(profile.email);
    const sealed = await sealProviderTokens(
      this.deps.secrets,
      { provider: pending.provider, provider_user_id: profile.providerUserId },
      {
        accessToken: profile.accessToken,
        refreshToken: profile.refreshToken,
        expiresAt: expiresAtFrom(this.deps.clock.now(), profile.expiresInSeconds),
      },
    );
    const link = async () =>
      this.deps.uow.run(systemScope, async (stores) => {
        const existing = await stores.identities.find(pending.provider, profile.providerUserId);
        // A known link keeps the user it was made for, even if the email at the provider changed.
        const user =
          (existing && (await stores.users.get(existing.user_id))) ??
          (await findOrCreateUser(stores, { email, name: profile.name }, this.deps.random.uuid(), isoNow(this.deps)));
        await stores.identities.upsert({
          user_id: user.id,
          provider: pending.provider,
          provider_user_id: profile.providerUserId,
          provider_token: sealed,
          scopes: profile.scopes.join(' '),
        });
        await recordSignIn(stores, this.deps, user, pending.provider, request);
        return user;
      });
    let user: User;
    try {
      user = await link();
    } catch (error) {
      // Two first sign-ins of the same person at once: the other one created the user; link to it.
      if (!(error instanceof ConflictError && error.code === 'email_taken')) throw error;
      user = await link();
    }
    return { user, provider: pending.provider, next: pending.next };
  }

  private provider(value: unknown): { id: IdentityProvider; adapter: SignInProvider } {
    if (!isOneOf(IDENTITY_PROVIDERS, value)) {
      throw new NotFoundError('provider', 'provider_not_configured', `no sign-in provider named "${String(value)}"`);
    }
    const adapter = this.deps.providers.signIn[value];
    if (!adapter) {
      throw new NotFoundError(
        'provider',
        'provider_not_configured',
        `sign-in with ${PROVIDER_NAMES[value]} is not configured on this server`,
      );
    }
    return { id: value, adapter };
  }

  private randomText(bytes: number): string {
    return Buffer.from(this.deps.random.bytes(bytes)).toString('base64url');
  }
}
