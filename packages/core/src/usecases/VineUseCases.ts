import type { UserActor } from '../domain/actors.js';
import { NotFoundError } from '../domain/errors.js';
import { type PageQuery, type PageResult, pageRequest, pageResult } from '../domain/pagination.js';
import type { CloudIdentity, Vine } from '../domain/records.js';
import { isUuid, requireName } from '../domain/validation.js';
import { ownerScope, type Stores } from '../ports/UnitOfWork.js';
import { type CreateVineInput, parseVineInput } from './vineInput.js';
import { type CoreDeps, isoNow } from './CoreDeps.js';
import { type VineSummary, type VineView, vineForPeople, vineSummary } from './views.js';

/** Vines, which the CLI calls configurations (SPEC §4.3). */
export class VineUseCases {
  constructor(private readonly deps: CoreDeps) {}

  async create(user: UserActor, input: CreateVineInput): Promise<VineView> {
    const parsed = parseVineInput(input);
    const ownerId = user.userId;
    return this.deps.uow.run(ownerScope(ownerId), async (stores) => {
      const vineyard = await stores.vineyards.get(ownerId, parsed.vineyard_id);
      if (!vineyard) throw new NotFoundError('vineyard');
      let cloudIdentity: CloudIdentity | null = null;
      if (parsed.cloud_identity && 'id' in parsed.cloud_identity) {
        cloudIdentity = await stores.cloudIdentities.get(ownerId, parsed.cloud_identity.id);
        if (!cloudIdentity) throw new NotFoundError('cloud_identity');
      } else if (parsed.cloud_identity) {
        cloudIdentity = await stores.cloudIdentities.create({
          id: this.deps.random.uuid(),
          owner_id: ownerId,
          provider: 'aws',
          role_arn: parsed.cloud_identity.role_arn,
          external_id: parsed.cloud_identity.external_id ?? this.deps.random.uuid(),
        });
      }
      const now = isoNow(this.deps);
      const vine = await stores.vines.create({
        id: this.deps.random.uuid(),
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
        created_at: now,
        updated_at: now,
      });
      return this.view(stores, vine);
    });
  }

  /** A page of vines, newest first, as summaries (no files, no variables). */
  async list(user: UserActor, query: PageQuery = {}): Promise<PageResult<VineSummary>> {
    const request = pageRequest(query, this.deps.settings.pageLimits);
    const page = await this.deps.uow.run(ownerScope(user.userId), (stores) => stores.vines.page(user.userId, request));
    return pageResult(page, request, vineSummary);
  }

  /** By id or by name: `GET /api/cli/configurations/{name}` accepts either. */
  async get(user: UserActor, nameOrId: unknown): Promise<VineView> {
    if (typeof nameOrId !== 'string' || nameOrId === '') throw new NotFoundError('configuration');
    return this.deps.uow.run(ownerScope(user.userId), async (stores) => {
      const vine = isUuid(nameOrId)
        ? ((await stores.vines.get(user.userId, nameOrId.toLowerCase())) ??
          (await stores.vines.findByName(user.userId, nameOrId)))
        : await stores.vines.findByName(user.userId, nameOrId);
      if (!vine) throw new NotFoundError('configuration');
      return this.view(stores, vine);
    });
  }

  async getByProjectName(user: UserActor, projectName: unknown): Promise<VineView> {
    const name = requireName(projectName, 'project_name');
    return this.deps.uow.run(ownerScope(user.userId), async (stores) => {
      const vine = await stores.vines.findByProjectName(user.userId, name);
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
