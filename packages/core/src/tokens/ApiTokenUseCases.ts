import type { UserActor } from '../domain/actors.js';
import {
  ForbiddenError,
  InsufficientRoleError,
  NotFoundError,
  UnauthorizedError,
  ValidationError,
} from '../domain/errors.js';
import { type PageQuery, type PageResult, pageRequest, pageResult } from '../domain/pagination.js';
import type { ApiToken } from '../domain/records.js';
import { isOrgRole, LEAST_ROLE, type OrgAction, type OrgRole, roleAllows, roleRank } from '../domain/roles.js';
import { optionalUuid, requireName, requireUuid } from '../domain/validation.js';
import {
  API_TOKEN_MAX_DAYS,
  API_TOKEN_MIN_DAYS,
  API_TOKEN_USE_RECORD_SECONDS,
  apiTokenExpiry,
  generateApiToken,
  isApiTokenForm,
} from '../auth/apiToken.js';
import { hashToken, tokenMatchesHash } from '../auth/workerToken.js';
import type { Membership } from '../ports/OrgStore.js';
import { memberScope, ownerScope, systemScope } from '../ports/UnitOfWork.js';
import { recordAudit } from '../usecases/audit.js';
import { Access } from '../usecases/Access.js';
import { type CoreDeps, isoSecondsBefore } from '../usecases/CoreDeps.js';
import { type ApiTokenCache, announceApiCredentialsChanged, type VerifiedApiToken } from './ApiTokenCache.js';

/** What `GET /api/tokens` shows of a token: never its secret nor its hash. */
export interface ApiTokenView {
  id: string;
  name: string;
  org_id: string | null;
  role: OrgRole | null;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
}

/** `POST /api/tokens`: the view and, this once, the token itself. */
export interface CreatedApiToken extends ApiTokenView {
  token: string;
}

export interface CreateApiTokenInput {
  name: unknown;
  org_id?: unknown;
  role?: unknown;
  expires_in_days?: unknown;
}

/** Compared against when no token has the presented hash, so both paths cost the same. */
const UNKNOWN_TOKEN_HASH = hashToken('unknown api token');

export function apiTokenView(token: ApiToken): ApiTokenView {
  return {
    id: token.id,
    name: token.name,
    org_id: token.org_id,
    role: token.role,
    created_at: token.created_at,
    expires_at: token.expires_at,
    last_used_at: token.last_used_at,
  };
}

function invalidToken(): UnauthorizedError {
  return new UnauthorizedError('invalid_token', 'the bearer token is not valid');
}

/** API tokens may not make or revoke tokens: a leaked token must not be able to mint successors. */
function refuseApiTokenActor(actor: UserActor): void {
  if (actor.apiToken) {
    throw new ForbiddenError('token_not_allowed', 'API tokens cannot create or revoke API tokens; sign in instead');
  }
}

/**
 * API tokens for automation (issue 12): a personal token acts as its creator; an organization
 * token acts only within its organization, with the lower of its role and its creator's current
 * role (that cap is applied per request by the access rules; here only the creation rule and
 * the creator's membership are checked).
 */
export class ApiTokenUseCases {
  private readonly access: Access;

  constructor(
    private readonly deps: CoreDeps,
    private readonly cache: ApiTokenCache,
  ) {
    this.access = new Access(deps);
  }

  /** `POST /api/tokens`. The token is in the answer and nowhere else, ever. */
  async create(actor: UserActor, input: CreateApiTokenInput): Promise<CreatedApiToken> {
    refuseApiTokenActor(actor);
    const name = requireName(input.name, 'name');
    const orgId = optionalUuid(input.org_id, 'org_id');
    const days = optionalDays(input.expires_in_days);
    let role: OrgRole | null = null;
    if (input.role !== undefined && input.role !== null) {
      if (orgId === null) {
        throw new ValidationError('a personal token has no role: it acts as you', [
          { path: 'role', message: 'only an organization token (org_id) takes a role' },
        ]);
      }
      if (!isOrgRole(input.role)) {
        throw new ValidationError('role must be one of viewer, operator, admin, owner', [
          { path: 'role', message: 'must be one of viewer, operator, admin, owner' },
        ]);
      }
      role = input.role;
    }
    if (orgId !== null) {
      const membership = await this.membershipIn(actor.userId, orgId);
      this.requireAction(membership, 'tokens.manage');
      role ??= 'viewer';
      if (roleRank(role) > roleRank(membership.role)) {
        throw new InsufficientRoleError(role, membership.role);
      }
    }
    const now = this.deps.clock.now();
    const token = generateApiToken(this.deps.random);
    const record: ApiToken = {
      id: this.deps.random.uuid(),
      owner_id: orgId ?? actor.userId,
      created_by: actor.userId,
      org_id: orgId,
      name,
      role,
      token_hash: hashToken(token),
      created_at: now.toISOString(),
      expires_at: days === null ? null : apiTokenExpiry(now, days),
      last_used_at: null,
      revoked_at: null,
    };
    const created = await this.deps.uow.run(ownerScope(record.owner_id, actor.userId), async (stores) => {
      const saved = await stores.apiTokens.create(record);
      await recordAudit(stores, this.deps, actor, {
        action: 'token.create',
        target: { type: 'token', id: saved.id },
        owner_id: saved.owner_id,
        details: { name, role, expires_at: saved.expires_at },
      });
      return saved;
    });
    return { ...apiTokenView(created), token };
  }

  /**
   * `GET /api/tokens`: the caller's personal tokens, or with `org_id` the organization's (for
   * those who may manage them). Revoked tokens are not listed.
   */
  async list(actor: UserActor, query: PageQuery & { org_id?: unknown }): Promise<PageResult<ApiTokenView>> {
    const request = pageRequest(query, this.deps.settings.pageLimits);
    const orgId = optionalUuid(query.org_id === '' ? undefined : query.org_id, 'org_id');
    let ownerId = actor.userId;
    if (actor.apiToken?.orgId && orgId !== actor.apiToken.orgId) {
      // An organization token sees only its organization's tokens, never its creator's personal ones.
      throw new ForbiddenError('token_not_allowed', "an organization token lists only its organization's tokens");
    }
    if (orgId !== null) {
      // Memberships as the actor acts: an organization token's role is capped by its creator's.
      const membership = (await this.access.memberships(actor)).find((candidate) => candidate.org_id === orgId);
      if (!membership) throw new NotFoundError('org');
      this.requireAction(membership, 'tokens.manage');
      ownerId = orgId;
    }
    return this.deps.uow.read(ownerScope(ownerId, actor.userId), async (stores) =>
      pageResult(await stores.apiTokens.page(ownerId, request), request, apiTokenView),
    );
  }

  /** `DELETE /api/tokens/{id}`: by its creator, or an organization token by the organization's admins. */
  async revoke(actor: UserActor, tokenId: unknown): Promise<void> {
    refuseApiTokenActor(actor);
    const id = requireUuid(tokenId, 'id');
    const token = (await this.findPersonal(actor.userId, id)) ?? (await this.findOfOrgs(actor.userId, id));
    if (!token || token.revoked_at !== null) throw new NotFoundError('token');
    const at = this.deps.clock.now().toISOString();
    await this.deps.uow.run(ownerScope(token.owner_id, actor.userId), async (stores) => {
      if (!(await stores.apiTokens.revoke(token.owner_id, token.id, at))) return;
      await recordAudit(stores, this.deps, actor, {
        action: 'token.revoke',
        target: { type: 'token', id: token.id },
        owner_id: token.owner_id,
        details: { name: token.name },
      });
    });
    // Refused from here on: at once on this replica, and on the others as the event reaches them.
    this.cache.forgetAll();
    await announceApiCredentialsChanged(this.deps.events, token.owner_id);
  }

  /**
   * The person behind an API token (`Authorization: Bearer trt_…`). Unknown, revoked and expired
   * tokens are one `401 invalid_token`, as is an organization token whose creator has left the
   * organization. The lookup is by hash (the token, its creator and the creator's memberships in
   * one read), then the hashes are compared in constant time; a token that verified is reused for
   * `apiTokenCacheSeconds` without that read (`ApiTokenCache`). The last use is written at most
   * once a minute. The memberships are carried by the actor for this request
   * (`UserActor.memberships`).
   */
  async authenticate(token: string): Promise<UserActor> {
    if (!isApiTokenForm(token)) throw invalidToken();
    const now = this.deps.clock.now();
    const tokenHash = hashToken(token);
    const cached = this.cache.lookup(tokenHash);
    const ticket = this.cache.ticket();
    const verified = cached ?? (await this.verify(token, tokenHash));
    if (!verified) throw invalidToken();
    const { record, user, memberships } = verified;
    if (record.revoked_at !== null) throw invalidToken();
    if (record.expires_at !== null && !(Date.parse(record.expires_at) > now.getTime())) throw invalidToken();
    if (record.org_id !== null && !memberships.some((membership) => membership.org_id === record.org_id)) {
      throw invalidToken();
    }
    const notBefore = isoSecondsBefore(now, API_TOKEN_USE_RECORD_SECONDS);
    let lastUsedAt = record.last_used_at;
    if (lastUsedAt === null || Date.parse(lastUsedAt) < Date.parse(notBefore)) {
      const at = now.toISOString();
      await this.deps.uow.run(systemScope, (stores) => stores.apiTokens.recordUse(record.id, at, notBefore));
      lastUsedAt = at;
      if (cached) this.cache.used(tokenHash, at);
    }
    if (!cached) this.cache.remember({ record: { ...record, last_used_at: lastUsedAt }, user, memberships }, ticket);
    return {
      userId: user.id,
      email: user.email,
      apiToken: {
        id: record.id,
        orgId: record.org_id,
        role: record.org_id === null ? null : (record.role ?? 'viewer'),
      },
      memberships,
    };
  }

  /** The token, its creator and their memberships in one read; null for an unknown token. */
  private async verify(token: string, tokenHash: string): Promise<VerifiedApiToken | null> {
    return this.deps.uow.read(systemScope, async (stores) => {
      const found = await stores.apiTokens.findByHashWithCreator(tokenHash);
      const record = found?.token ?? null;
      const matches = tokenMatchesHash(token, record?.token_hash ?? UNKNOWN_TOKEN_HASH);
      if (!record || !matches) return null;
      const user = found?.creator ?? null;
      if (!user) return null;
      // Read with the token, in the same unit of work: the request's access checks use these.
      return { record, user, memberships: await stores.orgs.membershipsOf(user.id) };
    });
  }

  private async findPersonal(userId: string, id: string): Promise<ApiToken | null> {
    return this.deps.uow.read(ownerScope(userId), (stores) => stores.apiTokens.find(id));
  }

  /**
   * An organization token the person may revoke: one they made (while still a member), or any of
   * an organization in which they may manage tokens; null when it is neither (or no such token).
   */
  private async findOfOrgs(userId: string, id: string): Promise<ApiToken | null> {
    const memberships = await this.membershipsOf(userId);
    if (memberships.length === 0) return null;
    const scope = memberScope(
      userId,
      memberships.map((membership) => membership.org_id),
    );
    const token = await this.deps.uow.read(scope, (stores) => stores.apiTokens.find(id));
    if (!token || token.org_id === null || token.created_by === userId) return token;
    const membership = memberships.find((candidate) => candidate.org_id === token.org_id);
    if (!membership) return null;
    this.requireAction(membership, 'tokens.manage');
    return token;
  }

  /** The organizations the person has joined (read as system work: it precedes any owner). */
  private async membershipsOf(userId: string): Promise<Membership[]> {
    return this.deps.uow.read(systemScope, (stores) => stores.orgs.membershipsOf(userId));
  }

  /** The person's membership of `orgId`; a non-member gets 404, as for everything of the org. */
  private async membershipIn(userId: string, orgId: string): Promise<Membership> {
    const membership = (await this.membershipsOf(userId)).find((candidate) => candidate.org_id === orgId);
    if (!membership) throw new NotFoundError('org');
    return membership;
  }

  private requireAction(membership: Membership, action: OrgAction): void {
    if (!roleAllows(membership.role, action)) throw new InsufficientRoleError(LEAST_ROLE[action], membership.role);
  }
}

function optionalDays(value: unknown): number | null {
  if (value === undefined || value === null) return null;
  if (
    typeof value !== 'number' ||
    !Number.isInteger(value) ||
    value < API_TOKEN_MIN_DAYS ||
    value > API_TOKEN_MAX_DAYS
  ) {
    throw new ValidationError(
      `expires_in_days must be an integer from ${API_TOKEN_MIN_DAYS} to ${API_TOKEN_MAX_DAYS}`,
      [{ path: 'expires_in_days', message: `must be an integer from ${API_TOKEN_MIN_DAYS} to ${API_TOKEN_MAX_DAYS}` }],
    );
  }
  return value;
}
