import { recordAudit } from './audit.js';
import type { UserActor } from '../domain/actors.js';
import { NotFoundError } from '../domain/errors.js';
import { type PageQuery, type PageResult, pageRequest, pageResult } from '../domain/pagination.js';
import type { Vine, Vineyard } from '../domain/records.js';
import { requireName, requireUuid } from '../domain/validation.js';
import { visibleOwners } from '../ports/UnitOfWork.js';
import { Access, parseOwnerFilter } from './Access.js';
import { type CoreDeps, isoNow } from './CoreDeps.js';
import { type VineyardSummary, type VineyardView, vineForPeople, vineSummary } from './views.js';

export class VineyardUseCases {
  private readonly access: Access;

  constructor(private readonly deps: CoreDeps) {
    this.access = new Access(deps);
  }

  /** In the caller's own records, or with `org_id` in an organization's (`vineyards.manage`). */
  async create(user: UserActor, input: { name: unknown; org_id?: unknown }): Promise<VineyardView> {
    const name = requireName(input.name, 'name');
    const { ownerId, scope } = await this.access.ownerFor(user, input.org_id, 'vineyards.manage');
    const vineyard: Vineyard = {
      id: this.deps.random.uuid(),
      owner_id: ownerId,
      name,
      created_at: isoNow(this.deps),
    };
    const created = await this.deps.uow.run(scope, async (stores) => {
      const made = await stores.vineyards.create(vineyard);
      await recordAudit(stores, this.deps, user, {
        action: 'vineyard.create',
        target: { type: 'vineyard', id: made.id },
        owner_id: ownerId,
        details: { name },
      });
      return made;
    });
    return { ...created, vines: [] };
  }

  /**
   * A page of vineyards, newest first, each with its vines as summaries (no files, no variables):
   * the caller's own and their organizations', or those `org_id` names.
   */
  async list(user: UserActor, query: PageQuery & { org_id?: unknown } = {}): Promise<PageResult<VineyardSummary>> {
    const request = pageRequest(query, this.deps.settings.pageLimits);
    const scope = await this.access.readScope(user, parseOwnerFilter(query.org_id));
    if (scope === null) return pageResult({ items: [], next: null }, request, (vineyard: VineyardSummary) => vineyard);
    const owners = visibleOwners(scope) ?? [];
    return this.deps.uow.read(scope, async (stores) => {
      const page = await stores.vineyards.page(owners, request);
      const vines: Vine[] = [];
      for (const ownerId of new Set(page.items.map((vineyard) => vineyard.owner_id))) {
        const ids = page.items.filter((vineyard) => vineyard.owner_id === ownerId).map((vineyard) => vineyard.id);
        vines.push(...(await stores.vines.list(ownerId, { vineyard_ids: ids })));
      }
      return pageResult(page, request, (vineyard) => ({
        ...vineyard,
        vines: vines.filter((vine) => vine.vineyard_id === vineyard.id).map(vineSummary),
      }));
    });
  }

  async get(user: UserActor, id: unknown): Promise<VineyardView> {
    const vineyardId = requireUuid(id, 'id');
    const { record, scope } = await this.access.locate(user, 'read', 'vineyard_not_found', (stores, ownerId) =>
      stores.vineyards.get(ownerId, vineyardId),
    );
    return this.deps.uow.read(scope, async (stores) => {
      const vineyard = await stores.vineyards.get(record.owner_id, vineyardId);
      if (!vineyard) throw new NotFoundError('vineyard');
      const vines = await stores.vines.list(record.owner_id, { vineyard_id: vineyard.id });
      return { ...vineyard, vines: vines.map(vineForPeople) };
    });
  }
}
