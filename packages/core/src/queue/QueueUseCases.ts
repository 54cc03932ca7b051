import type { UserActor } from '../domain/actors.js';
import { isSpeculativeTrigger, type JobSummary } from '../domain/records.js';
import type { JobSummaryView } from '../usecases/views.js';
import { pageRequest } from '../domain/pagination.js';
import { offeredTo, type VineTurn, type WaitingFor, whyQueuedJobWaits } from '../jobs/waitingFor.js';
import type { JobOffer } from '../ports/JobStore.js';
import type { Stores } from '../ports/UnitOfWork.js';
import { visibleOwners } from '../ports/UnitOfWork.js';
import { Access, parseOwnerFilter } from '../usecases/Access.js';
import type { CoreDeps } from '../usecases/CoreDeps.js';
import { type AgentPool, agentPoolOf, type OwnerAgents, readOwnerAgents } from './agentPool.js';

/** One queued job as the queue shows it (issue 29). */
export interface QueueEntryView {
  /** 1-based place in its owner's queue: the order the owner's agents claim its queued jobs in. */
  position: number;
  job: JobSummaryView;
  /** Seconds since it was queued, by the server's clock. */
  waited_seconds: number;
  vine: { id: string; name: string } | null;
  vineyard: { id: string; name: string } | null;
  /** The agents that may take it, and how many of them are online and idle now. */
  pool: AgentPool;
  /** Why it waits; null when an idle agent of its pool takes it at its next claim. */
  waiting_for: WaitingFor | null;
}

export interface QueueView {
  jobs: QueueEntryView[];
  /** Every queued job the person may read (under the filter), of which `jobs` is the head. */
  total: number;
  limit: number;
}

/**
 * The job queue (issue 29): the queued jobs a person may read, in the order agents claim them,
 * each with the agent pool that can take it and why it waits. Positions are the store's
 * (`JobStore.queue`: the claim's order); the pool and the reason are `agentPoolOf` and
 * `whyQueuedJobWaits`, which a job's page uses too.
 */
export class QueueUseCases {
  private readonly access: Access;

  constructor(private readonly deps: CoreDeps) {
    this.access = new Access(deps);
  }

  /** `org_id`: one organization's queue, or `personal`; `limit`: how many from the head (paging's bounds). */
  async list(user: UserActor, query: { org_id?: unknown; limit?: unknown } = {}): Promise<QueueView> {
    const { limit } = pageRequest({ limit: query.limit }, this.deps.settings.pageLimits);
    const scope = await this.access.readScope(user, parseOwnerFilter(query.org_id));
    if (scope === null) return { jobs: [], total: 0, limit };
    const now = this.deps.clock.now();
    return this.deps.uow.read(scope, async (stores) => {
      const queue = await stores.jobs.queue(visibleOwners(scope) ?? [], limit);
      const owners = new Map<string, OwnerAgents>();
      const running = new Map<string, { id: string; job_type: JobSummary['job_type'] }>();
      const offers = new Map<string, JobOffer>();
      for (const ownerId of new Set(queue.jobs.map((entry) => entry.job.owner_id))) {
        owners.set(ownerId, await readOwnerAgents(stores, ownerId));
        const ids = queue.jobs.filter((entry) => entry.job.owner_id === ownerId).map((entry) => entry.job.id);
        for (const [id, offer] of await stores.jobs.standingOffers(ownerId, ids, now.toISOString())) {
          offers.set(id, offer);
        }
        for (const job of await stores.jobs.list(ownerId, { status: 'PROCESSING' })) {
          if (job.vine_id !== null) running.set(job.vine_id, { id: job.id, job_type: job.job_type });
        }
      }
      const vineyards = await this.vineyardNames(
        stores,
        queue.jobs.map((entry) => entry.job),
      );
      // A vine's queued jobs come in its insertion order (a job never passes an earlier one of its
      // vine), and the head of a queue holds every job ahead of its own: the first seen goes first.
      const firstOfVine = new Map<string, JobSummary>();
      for (const { job } of queue.jobs) {
        if (job.vine_id !== null && !firstOfVine.has(job.vine_id)) firstOfVine.set(job.vine_id, job);
      }
      const jobs = queue.jobs.map(({ job, position }): QueueEntryView => {
        const pool = agentPoolOf(
          job,
          owners.get(job.owner_id) as OwnerAgents,
          now,
          this.deps.settings.heartbeatTimeoutSeconds,
        );
        const first = job.vine_id === null ? undefined : firstOfVine.get(job.vine_id);
        const turn: VineTurn | null =
          job.vine_id === null
            ? null
            : { running: running.get(job.vine_id) ?? null, first: first && first.id !== job.id ? first : null };
        const vine = job.config_snapshot.vine;
        return {
          position,
          job: { ...job, speculative: isSpeculativeTrigger(job.trigger) },
          waited_seconds: Math.max(0, Math.floor((now.getTime() - Date.parse(job.created_at)) / 1000)),
          vine: vine ? { id: vine.id, name: vine.name } : null,
          vineyard:
            job.vineyard_id === null
              ? null
              : { id: job.vineyard_id, name: vineyards.get(job.vineyard_id) ?? job.vineyard_id },
          pool,
          waiting_for: whyQueuedJobWaits(
            turn,
            pool,
            offeredTo(offers.get(job.id), owners.get(job.owner_id) as OwnerAgents),
          ),
        };
      });
      return { jobs, total: queue.total, limit };
    });
  }

  private async vineyardNames(stores: Stores, jobs: readonly JobSummary[]): Promise<Map<string, string>> {
    const names = new Map<string, string>();
    for (const job of jobs) {
      if (job.vineyard_id === null || names.has(job.vineyard_id)) continue;
      const vineyard = await stores.vineyards.get(job.owner_id, job.vineyard_id);
      if (vineyard) names.set(vineyard.id, vineyard.name);
    }
    return names;
  }
}
