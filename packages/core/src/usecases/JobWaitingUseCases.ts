import type { UserActor } from '../domain/actors.js';
import { requireUuid } from '../domain/validation.js';
import { type WaitingFor, waitingFor } from '../jobs/waitingFor.js';
import { Access, mayAct } from './Access.js';
import type { OrgAction } from '../domain/roles.js';
import { planActions, planFactsOf } from '../jobs/deployGate.js';
import type { CoreDeps } from './CoreDeps.js';
import { jobForPeople, type JobView } from './views.js';

/** One job as people read it, with why it waits (`waiting_for`, issue 25). */
export interface JobDetailView extends JobView {
  /** Why the job waits (`waitingFor`); null when it does not. */
  waiting_for: WaitingFor | null;
  /** Of a queued job, its place in its owner's queue (`JobStore.queue`, issue 29); null otherwise. */
  queue_position: number | null;
}

/**
 * `GET /api/cli/jobs/{id}` and the job page: the job and why it waits, read in one unit of work.
 * Lists and the live streams read jobs without it (`JobUseCases`): it costs a few reads.
 */
export class JobWaitingUseCases {
  private readonly access: Access;

  constructor(private readonly deps: CoreDeps) {
    this.access = new Access(deps);
  }

  async show(user: UserActor, id: unknown): Promise<JobDetailView> {
    const jobId = requireUuid(id, 'id');
    const { record, scope } = await this.access.locate(user, 'read', 'job_not_found', (stores, ownerId) =>
      stores.jobs.get(ownerId, jobId),
    );
    // A plan's `actions` for this person, by the deploy gate's rule (issue 23).
    const memberships = record.job_type === 'PLAN' ? await this.access.memberships(user) : [];
    const may = (action: OrgAction) => mayAct(user, memberships, record.owner_id, action);
    const { waiting, position, facts } = await this.deps.uow.read(scope, async (stores) => ({
      waiting: await waitingFor(stores, this.deps, record),
      position: record.status === 'QUEUED' ? await stores.jobs.queuePosition(record.owner_id, record.id) : null,
      facts:
        record.job_type === 'PLAN'
          ? await planFactsOf(stores, record, user, {
              run: may('jobs.run'),
              approve: may('plans.approve'),
              override: may('plans.override'),
            })
          : null,
    }));
    const actions = record.job_type === 'PLAN' ? { actions: facts === null ? null : planActions(facts) } : {};
    return { ...jobForPeople(record), waiting_for: waiting, queue_position: position, ...actions };
  }
}
