import type { UserActor } from '../domain/actors.js';
import { NotFoundError } from '../domain/errors.js';
import { type PageQuery, type PageResult, pageRequest, pageResult } from '../domain/pagination.js';
import type { Vineyard } from '../domain/records.js';
import { requireName, requireUuid } from '../domain/validation.js';
import { ownerScope } from '../ports/UnitOfWork.js';
import { type CoreDeps, isoNow } from './CoreDeps.js';
import { type VineyardSummary, type VineyardView, vineForPeople, vineSummary } from './views.js';

export class VineyardUseCases {
  constructor(private readonly deps: CoreDeps) {}

  async create(user: UserActor, input: { name: unknown }): Promise<VineyardView> {
    const name = requireName(input.name, 'name');
    const vineyard: Vineyard = {
      id: this.deps.random.uuid(),
      owner_id: user.userId,
      name,
      created_at: isoNow(this.deps),
    };
    const created = await this.deps.uow.run(ownerScope(user.userId), (stores) => stores.vineyards.create(vineyard));
    return { ...created, vines: [] };
  }

  /** A page of vineyards, newest first, each with its vines as summaries (no files, no variables). */
  async list(user: UserActor, query: PageQuery = {}): Promise<PageResult<VineyardSummary>> {
    const request = pageRequest(query, this.deps.settings.pageLimits);
    return this.deps.uow.run(ownerScope(user.userId), async (stores) => {
      const page = await stores.vineyards.page(user.userId, request);
      const vines =
        page.items.length === 0
          ? []
          : await stores.vines.list(user.userId, { vineyard_ids: page.items.map((vineyard) => vineyard.id) });
      return pageResult(page, request, (vineyard) => ({
        ...vineyard,
        vines: vines.filter((vine) => vine.vineyard_id === vineyard.id).map(vineSummary),
      }));
    });
  }

  async get(user: UserActor, id: unknown): Promise<VineyardView> {
    const vineyardId = requireUuid(id, 'id');
    return this.deps.uow.run(ownerScope(user.userId), async (stores) => {
      const vineyard = await stores.vineyards.get(user.userId, vineyardId);
      if (!vineyard) throw new NotFoundError('vineyard');
      const vines = await stores.vines.list(user.userId, { vineyard_id: vineyard.id });
      return { ...vineyard, vines: vines.map(vineForPeople) };
    });
  }
}
