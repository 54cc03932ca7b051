import type { UserActor } from '../domain/actors.js';
import { NotFoundError, TooLargeError, UnprocessableError, ValidationError } from '../domain/errors.js';
import { isOneOf } from '../domain/enums.js';
import { type PageQuery, type PageResult, pageRequest, pageResult } from '../domain/pagination.js';
import { POLICY_ENFORCEMENTS, type PolicyEnforcement, type PolicyToEvaluate } from '../domain/policies.js';
import { declaresDenyRule, MAX_POLICY_MODULE_BYTES, type Policy, type PolicyVersion } from '../domain/policyRecords.js';
import { optionalUuid, requireName, requireUuid } from '../domain/validation.js';
import type { PolicyCheck } from '../ports/PolicyCompiler.js';
import type { Scope, Stores } from '../ports/UnitOfWork.js';
import { visibleOwners } from '../ports/UnitOfWork.js';
import { Access, parseOwnerFilter } from '../usecases/Access.js';
import { recordAudit } from '../usecases/audit.js';
import type { CoreDeps } from '../usecases/CoreDeps.js';

/** What the API shows of a policy (its current version). */
export interface PolicyView {
  id: string;
  name: string;
  enforcement: PolicyEnforcement;
  vineyard_id: string | null;
  org_id: string | null;
  version: number;
  module: string;
  created_at: string;
  updated_at: string;
}

/** What the API shows of one version. */
export interface PolicyVersionView {
  version: number;
  name: string;
  enforcement: PolicyEnforcement;
  module: string;
  created_by: string;
  created_at: string;
}

/** `GET /api/policies/{id}`: the policy and every version, oldest first. */
export interface PolicyDetail extends PolicyView {
  versions: PolicyVersionView[];
}

export interface CreatePolicyInput {
  name?: unknown;
  enforcement?: unknown;
  module?: unknown;
  vineyard_id?: unknown;
  org_id?: unknown;
}

export interface UpdatePolicyInput {
  name?: unknown;
  enforcement?: unknown;
  module?: unknown;
}

export function policyView(policy: Policy): PolicyView {
  return {
    id: policy.id,
    name: policy.name,
    enforcement: policy.enforcement,
    vineyard_id: policy.vineyard_id,
    org_id: policy.org_id,
    version: policy.version,
    module: policy.module,
    created_at: policy.created_at,
    updated_at: policy.updated_at,
  };
}

function versionView(version: PolicyVersion): PolicyVersionView {
  return {
    version: version.version,
    name: version.name,
    enforcement: version.enforcement,
    module: version.module,
    created_by: version.created_by,
    created_at: version.created_at,
  };
}

/** What the claim of a PLAN carries of each policy that applies to its vine. */
export function policyToEvaluate(policy: Policy): PolicyToEvaluate {
  return {
    id: policy.id,
    version: policy.version,
    name: policy.name,
    enforcement: policy.enforcement,
    module: policy.module,
  };
}

/** The policies that apply to a vine of `vineyardId`, as a PLAN's claim carries them. */
export async function policiesForVine(
  stores: Stores,
  ownerId: string,
  vineyardId: string | null,
): Promise<PolicyToEvaluate[]> {
  return (await stores.policies.listApplicable(ownerId, vineyardId)).map(policyToEvaluate);
}

/**
 * Policies (issue 15): Rego modules the agent evaluates on every plan. Owned by a person or an
 * organization (managed by its admins: `policies.manage`); a module is checked with the engine
 * when saved, when the control plane has one.
 */
export class PolicyUseCases {
  private readonly access: Access;

  constructor(private readonly deps: CoreDeps) {
    this.access = new Access(deps);
  }

  /** `POST /api/policies`. */
  async create(actor: UserActor, input: CreatePolicyInput): Promise<PolicyView> {
    const name = requireName(input.name, 'name');
    const enforcement = requireEnforcement(input.enforcement);
    const vineyardId = optionalUuid(input.vineyard_id, 'vineyard_id');
    // Authorized before the engine runs: compiling costs processes, which only admins may spend (issue 23).
    const { ownerId, scope } = await this.access.ownerFor(actor, input.org_id, 'policies.manage');
    const module = await this.checkModule(input.module);
    const now = this.deps.clock.now().toISOString();
    const record: Policy = {
      id: this.deps.random.uuid(),
      owner_id: ownerId,
      created_by: actor.userId,
      org_id: ownerId === actor.userId ? null : ownerId,
      name,
      enforcement,
      vineyard_id: vineyardId,
      version: 1,
      module,
      created_at: now,
      updated_at: now,
    };
    const created = await this.deps.uow.run(scope, async (stores) => {
      if (vineyardId !== null && !(await stores.vineyards.get(ownerId, vineyardId))) {
        throw new NotFoundError('vineyard');
      }
      const saved = await stores.policies.create(record);
      await recordAudit(stores, this.deps, actor, {
        action: 'policy.create',
        target: { type: 'policy', id: saved.id },
        owner_id: saved.owner_id,
        details: { name: saved.name, enforcement: saved.enforcement, version: saved.version },
      });
      return saved;
    });
    return policyView(created);
  }

  /** `GET /api/policies`: the caller's and their organizations' (`?org_id=` narrows). */
  async list(actor: UserActor, query: PageQuery & { org_id?: unknown }): Promise<PageResult<PolicyView>> {
    const request = pageRequest(query, this.deps.settings.pageLimits);
    const scope = await this.access.readScope(actor, parseOwnerFilter(query.org_id));
    if (scope === null) return pageResult({ items: [], next: null }, request, policyView);
    const owners = visibleOwners(scope) ?? [];
    return this.deps.uow.read(scope, async (stores) =>
      pageResult(await stores.policies.page(owners, request), request, policyView),
    );
  }

  /** `GET /api/policies/{id}`: with every version. */
  async get(actor: UserActor, id: unknown): Promise<PolicyDetail> {
    const { record, scope } = await this.locate(actor, id, 'read');
    const versions = await this.deps.uow.read(scope, (stores) => stores.policies.versions(record.owner_id, record.id));
    return { ...policyView(record), versions: versions.map(versionView) };
  }

  /** `PUT /api/policies/{id}`: a new version; the old ones stay. */
  async update(actor: UserActor, id: unknown, input: UpdatePolicyInput): Promise<PolicyView> {
    if (input.name === undefined && input.enforcement === undefined && input.module === undefined) {
      throw new ValidationError('give at least one of name, enforcement and module', [
        { path: 'module', message: 'required when neither name nor enforcement is given' },
      ]);
    }
    const name = input.name === undefined ? undefined : requireName(input.name, 'name');
    const enforcement = input.enforcement === undefined ? undefined : requireEnforcement(input.enforcement);
    const { record, scope } = await this.locate(actor, id, 'policies.manage');
    const module = input.module === undefined ? undefined : await this.checkModule(input.module);
    const updated = await this.deps.uow.run(scope, async (stores) => {
      const current = await stores.policies.find(record.id);
      if (!current) throw new NotFoundError('policy');
      const next: Policy = {
        ...current,
        name: name ?? current.name,
        enforcement: enforcement ?? current.enforcement,
        module: module ?? current.module,
        version: current.version + 1,
        created_by: actor.userId,
        updated_at: this.deps.clock.now().toISOString(),
      };
      const saved = await stores.policies.update(next);
      if (!saved) throw new NotFoundError('policy');
      await recordAudit(stores, this.deps, actor, {
        action: 'policy.update',
        target: { type: 'policy', id: saved.id },
        owner_id: saved.owner_id,
        details: { name: saved.name, enforcement: saved.enforcement, version: saved.version },
      });
      return saved;
    });
    return policyView(updated);
  }

  /** `DELETE /api/policies/{id}`: with its versions. Plans keep the results they were given. */
  async delete(actor: UserActor, id: unknown): Promise<void> {
    const { record, scope } = await this.locate(actor, id, 'policies.manage');
    await this.deps.uow.run(scope, async (stores) => {
      await stores.policies.delete(record.owner_id, record.id);
      await recordAudit(stores, this.deps, actor, {
        action: 'policy.delete',
        target: { type: 'policy', id: record.id },
        owner_id: record.owner_id,
        details: { name: record.name, version: record.version },
      });
    });
  }

  /**
   * The module as saved: at most 64 KiB (`413 policy_too_large`), compiling with the engine when
   * this server has one (`422 policy_invalid` with the engine's message otherwise; `429
   * policy_checks_busy` when the engine is busy), and declaring a `deny` rule.
   */
  private async checkModule(value: unknown): Promise<string> {
    if (typeof value !== 'string' || value.trim() === '') {
      throw new ValidationError('module must be the Rego source of the policy', [
        { path: 'module', message: 'required' },
      ]);
    }
    const bytes = Buffer.byteLength(value, 'utf8');
    if (bytes > MAX_POLICY_MODULE_BYTES) {
      throw new TooLargeError(
        'policy_too_large',
        `the policy module is ${bytes} bytes; a module may be at most ${MAX_POLICY_MODULE_BYTES} bytes (64 KiB): split it into several policies`,
        MAX_POLICY_MODULE_BYTES,
      );
    }
    const check: PolicyCheck = this.deps.policyCompiler
      ? await this.deps.policyCompiler.check(value)
      : { status: 'unavailable' };
    if (check.status === 'invalid') throw invalid(check.message);
    const hasDeny = check.status === 'ok' ? check.rules.includes('deny') : declaresDenyRule(value);
    if (!hasDeny)
      throw invalid('the module declares no `deny` rule (a set of messages, e.g. `deny contains msg if { ... }`)');
    return value;
  }

  private async locate(
    actor: UserActor,
    id: unknown,
    action: 'read' | 'policies.manage',
  ): Promise<{ record: Policy; scope: Scope }> {
    const policyId = requireUuid(id, 'id');
    return this.access.locate(actor, action, 'policy_not_found', (stores) => stores.policies.find(policyId));
  }
}

function requireEnforcement(value: unknown): PolicyEnforcement {
  if (!isOneOf(POLICY_ENFORCEMENTS, value)) {
    throw new ValidationError(`enforcement must be one of ${POLICY_ENFORCEMENTS.join(', ')}`, [
      { path: 'enforcement', message: `must be one of ${POLICY_ENFORCEMENTS.join(', ')}` },
    ]);
  }
  return value;
}

function invalid(message: string): UnprocessableError {
  return new UnprocessableError('policy_invalid', `the policy module is refused: ${message}`);
}
