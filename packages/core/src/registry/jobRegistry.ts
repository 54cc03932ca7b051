import { issueJobRegistryToken, type JobRegistryActor, openJobRegistryToken } from '../auth/jobRegistryToken.js';
import { UnauthorizedError } from '../domain/errors.js';
import { ownerScope, type Stores } from '../ports/UnitOfWork.js';
import { TfeOrganizations } from '../tfe/TfeOrganizations.js';
import type { CoreDeps } from '../usecases/CoreDeps.js';
import { providerSource } from './mirror/records.js';

/** What a claim tells the agent of the registry (issue 28): how the job's engine reaches its owner's. */
export interface ClaimRegistry {
  /** The job's registry token: reads of the owner's registry (modules, providers, mirror) while the job runs. */
  token: string;
  /** The owner's registry namespace (`/api/registry/mirror/<namespace>/`, module sources `<host>/<namespace>/…`). */
  namespace: string;
  /**
   * The providers the owner's mirror serves: those it holds (`hostname/namespace/type`), and every
   * provider of the hostnames it pulls through from (`hostname/*\/*`); empty: no mirror to use.
   */
  mirror_providers: string[];
}

/**
 * The job-scoped credentials of the registry: issued at claim, and accepted while the job is
 * `PROCESSING` on the worker that claimed it. No person's token ever reaches an agent's engine.
 */
export class JobRegistryAccess {
  constructor(private readonly deps: Pick<CoreDeps, 'uow' | 'secrets' | 'settings' | 'upstreamRegistry'>) {}

  /**
   * What a claim tells the agent of the owner's registry besides the token, read in the claim's
   * own unit of work (no second one per claim).
   */
  async readForClaim(stores: Stores, ownerId: string): Promise<Omit<ClaimRegistry, 'token'>> {
    const namespace = await new TfeOrganizations(this.deps).nameOf(stores, ownerId);
    const providers = await stores.mirror.providers(ownerId);
    // Pull-through (`TRELLIS_MIRROR_UPSTREAM`): the mirror fetches any provider of those hosts.
    const pulled = this.deps.upstreamRegistry ? this.deps.settings.mirror.upstreams.map((host) => `${host}/*/*`) : [];
    return { namespace, mirror_providers: [...new Set([...providers.map(providerSource), ...pulled])] };
  }

  /** The claim's registry: what `readForClaim` read, and the job's token. */
  async forClaim(
    job: { id: string; owner_id: string },
    workerId: string,
    read: Omit<ClaimRegistry, 'token'>,
  ): Promise<ClaimRegistry> {
    const token = await issueJobRegistryToken(this.deps.secrets, {
      jobId: job.id,
      workerId,
      ownerId: job.owner_id,
    });
    return { token, ...read };
  }

  /** The job a `trr_…` bearer token acts for, or `401 invalid_token` once the job is not running. */
  async authenticate(token: string): Promise<JobRegistryActor> {
    const actor = await openJobRegistryToken(this.deps.secrets, token);
    const job = await this.deps.uow.read(ownerScope(actor.ownerId), (stores) =>
      stores.jobs.get(actor.ownerId, actor.jobId),
    );
    if (job?.status !== 'PROCESSING' || job.claimed_by_worker_id !== actor.workerId) {
      throw new UnauthorizedError('invalid_token', 'the bearer token is not valid');
    }
    return actor;
  }
}
