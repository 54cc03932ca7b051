import type { UserActor } from '../domain/actors.js';
import { requireUuid } from '../domain/validation.js';
import { type WaitingFor, waitingFor } from '../jobs/waitingFor.js';
import { Access } from './Access.js';
import type { CoreDeps } from './CoreDeps.js';
import { jobForPeople, type JobView } from './views.js';

/** One job as people read it, with why it waits (`waiting_for`, issue 25). */
export interface JobDetailView extends JobView {
  /** Why the job waits (`waitingFor`); null when it does not. */
  waiting_for: WaitingFor | null;
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
    const waiting = await this.deps.uow.read(scope, (stores) => waitingFor(stores, this.deps, record));
    return { ...jobForPeople(record), waiting_for: waiting };
  }
}
