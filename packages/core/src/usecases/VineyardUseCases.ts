import type { UserActor } from '../domain/actors.js';
import { NotFoundError } from '../domain/errors.js';
import type { Vineyard } from '../domain/records.js';
import { requireName, requireUuid } from '../domain/validation.js';
import { ownerScope } from '../ports/UnitOfWork.js';
import { type CoreDeps, isoNow } from './CoreDeps.js';
import { type VineyardView, vineForPeople } from './views.js';

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

  async list(user: UserActor): Promise<VineyardView[]> {
    return this.deps.uow.run(ownerScope(user.userId), async (stores) => {
      const [vineyards, vines] = await Promise.all([
        stores.vineyards.list(user.userId),
        stores.vines.list(user.userId),
      ]);
      return vineyards.map((vineyard) => ({
        ...vineyard,
        vines: vines.filter((vine) => vine.vineyard_id === vineyard.id).map(vineForPeople),
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
