import { recordAudit } from './audit.js';
import type { UserActor } from '../domain/actors.js';
import { NotFoundError } from '../domain/errors.js';
import { type PageQuery, type PageResult, pageRequest, pageResult } from '../domain/pagination.js';
import type { Vine } from '../domain/records.js';
import { cloudIdentityFor } from '../vineEdits/cloudIdentity.js';
import { requireNoCycle } from '../drift/DriftUseCases.js';
import { isUuid, requireName } from '../domain/validation.js';
import { type Stores, visibleOwners } from '../ports/UnitOfWork.js';
import { Access, parseOwnerFilter } from './Access.js';
import { type CreateVineInput, parseVineInput } from './vineInput.js';
import { type CoreDeps, isoNow } from './CoreDeps.js';
import { type FleetVineSummary, type VineView, fleetVineSummary, vineForPeople } from './views.js';
import { type FleetCounts, type FleetQuery, emptyFleetCounts, parseFleetFilter } from '../fleet/fleet.js';

/** Vines, which the CLI calls configurations (SPEC §4.3). */
export class VineUseCases {
  private readonly access: Access;

  constructor(private readonly deps: CoreDeps) {
    this.access = new Access(deps);
  }

  /** A vine belongs to its vineyard's owner: in an organization, `vineyards.manage`. */
  async create(user: UserActor, input: CreateVineInput): Promise<VineView> {
    const parsed = parseVineInput(input);
    const located = await this.access.locate(user, 'vineyards.manage', 'vineyard_not_found', (stores, ownerId) =>
      stores.vineyards.get(ownerId, parsed.vineyard_id),
    );
    const ownerId = located.record.owner_id;
    return this.deps.uow.run(located.scope, async (stores) => {
      const vineyard = await stores.vineyards.get(ownerId, parsed.vineyard_id);
      if (!vineyard) throw new NotFoundError('vineyard');
      const cloudIdentity = await cloudIdentityFor(stores, this.deps, ownerId, parsed.cloud_identity);
      const now = isoNow(this.deps);
      const id = this.deps.random.uuid();
      // Each upstream is a configuration of the same owner (nothing runs after a new one yet: no cycle).
      await requireNoCycle(stores, { id, owner_id: ownerId }, parsed.triggers);
      const vine = await stores.vines.create({
        id,
        owner_id: ownerId,
        vineyard_id: vineyard.id,
        name: parsed.name,
        project_name: parsed.project_name,
        cloud_identity_id: cloudIdentity?.id ?? null,
        source: parsed.source,
        variables: parsed.variables,
        engine: parsed.engine,
        status: 'NEW',
        status_message: null,
        drift_detection: null,
        next_drift_check_at: null,
        drift: null,
        triggers: parsed.triggers,
        approval: parsed.approval,
        tags: parsed.tags,
        created_at: now,
        updated_at: now,
      });
      await recordAudit(stores, this.deps, user, {
        action: 'vine.create',
        target: { type: 'vine', id: vine.id },
        owner_id: ownerId,
        details: {
          name: vine.name,
          vineyard_id: vineyard.id,
          ...(vine.approval ? { approval_required: true, separate_approver: vine.approval.separate_approver } : {}),
          ...(vine.tags.length > 0 ? { tags: vine.tags.join(',') } : {}),
          ...(vine.triggers.after.length > 0 ? { triggers_after: vine.triggers.after.join(',') } : {}),
        },
      });
      return this.view(stores, vine);
    });
  }

  /**
   * A page of the vines the person may read (their own and their organizations', or those of
   * `org_id`), newest first, as summaries (no files, no variables), filtered as the fleet is
   * (issue 29: status, drift, policy, tag, last change; `fleet.ts`).
   */
  async list(
    user: UserActor,
    query: PageQuery & FleetQuery & { org_id?: unknown } = {},
  ): Promise<PageResult<FleetVineSummary>> {
    const request = pageRequest(query, this.deps.settings.pageLimits);
    const filter = parseFleetFilter(query);
    const scope = await this.access.readScope(user, parseOwnerFilter(query.org_id));
    const page =
      scope === null
        ? { items: [], next: null }
        : await this.deps.uow.read(scope, async (stores) => {
            const found = await stores.vines.fleetPage(visibleOwners(scope) ?? [], filter, request);
            const names = new Map<string, string>();
            for (const vine of found.items) {
              if (names.has(vine.vineyard_id)) continue;
              const vineyard = await stores.vineyards.get(vine.owner_id, vine.vineyard_id);
              if (vineyard) names.set(vineyard.id, vineyard.name);
            }
            return {
              items: found.items.map((vine) => ({ vine, vineyardName: names.get(vine.vineyard_id) ?? null })),
              next: found.next,
            };
          });
    return pageResult(page, request, ({ vine, vineyardName }) => fleetVineSummary(vine, vineyardName));
  }

  /**
   * How many of the vines `list` would list (over every page) stand each way: by status, drift
   * and policy result, each dimension counted under the other filters (`FleetCounts`).
   */
  async counts(user: UserActor, query: FleetQuery & { org_id?: unknown } = {}): Promise<FleetCounts> {
    const filter = parseFleetFilter(query);
    const scope = await this.access.readScope(user, parseOwnerFilter(query.org_id));
    if (scope === null) return emptyFleetCounts();
    return this.deps.uow.read(scope, (stores) => stores.vines.fleetCounts(visibleOwners(scope) ?? [], filter));
  }

  /** By id or by name: `GET /api/cli/configurations/{name}` accepts either. */
  async get(user: UserActor, nameOrId: unknown): Promise<VineView> {
    if (typeof nameOrId !== 'string' || nameOrId === '') throw new NotFoundError('configuration');
    const { record, scope } = await this.access.locate(
      user,
      'read',
      'configuration_not_found',
      async (stores, ownerId) =>
        isUuid(nameOrId)
          ? ((await stores.vines.get(ownerId, nameOrId.toLowerCase())) ??
            (await stores.vines.findByName(ownerId, nameOrId)))
          : stores.vines.findByName(ownerId, nameOrId),
    );
    return this.deps.uow.run(scope, async (stores) => {
      const vine = await stores.vines.get(record.owner_id, record.id);
      if (!vine) throw new NotFoundError('configuration');
      return this.view(stores, vine);
    });
  }

  async getByProjectName(user: UserActor, projectName: unknown): Promise<VineView> {
    const name = requireName(projectName, 'project_name');
    const { record, scope } = await this.access.locate(user, 'read', 'configuration_not_found', (stores, ownerId) =>
      stores.vines.findByProjectName(ownerId, name),
    );
    return this.deps.uow.run(scope, async (stores) => {
      const vine = await stores.vines.get(record.owner_id, record.id);
      if (!vine) throw new NotFoundError('configuration');
      return this.view(stores, vine);
    });
  }

  private async view(stores: Stores, vine: Vine): Promise<VineView> {
    const [cloudIdentity, components] = await Promise.all([
      vine.cloud_identity_id ? stores.cloudIdentities.get(vine.owner_id, vine.cloud_identity_id) : null,
      stores.vines.getComponents(vine.owner_id, vine.id),
    ]);
    return { ...vineForPeople(vine), cloud_identity: cloudIdentity, components };
  }
}
