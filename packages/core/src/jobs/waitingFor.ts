import { isSpeculativeTrigger, type Job, type JobSummary } from '../domain/records.js';
import type { JobOffer } from '../ports/JobStore.js';
import { type AgentPool, agentPoolOf, type OwnerAgents, readOwnerAgents } from '../queue/agentPool.js';
import type { Stores } from '../ports/UnitOfWork.js';
import type { CoreDeps } from '../usecases/CoreDeps.js';

/**
 * Why a job waits (issue 25), for people: the API's `waiting_for`, the CLI's follow and the job
 * page all show this, and nothing else decides it.
 * - `vine_busy`: another job of its configuration runs, or was queued before it (`job_id`): one job runs per configuration.
 * - `no_agent_online`: no agent of the job's owner is online (an organization's jobs run only on its own agents).
 * - `agents_busy`: every online agent of the owner is running a job.
 * - `approval`: a plan that must be approved before it can be deployed, and is not decided yet.
 * - `offered`: a DEPLOY held a few seconds for the agent that ran its plan (issue 31, `JobOffer`).
 */
export type WaitingReason = 'vine_busy' | 'no_agent_online' | 'agents_busy' | 'approval' | 'offered';

export interface WaitingFor {
  reason: WaitingReason;
  /** One sentence for people, saying what to do when there is something to do. */
  message: string;
  /** `vine_busy`: the job the configuration is busy with. */
  job_id?: string;
}

/** What the job's configuration holds up: the job it runs, else the queued job that goes first. */
export interface VineTurn {
  /** The job of the configuration that runs now. */
  running: Pick<JobSummary, 'id' | 'job_type'> | null;
  /** The configuration's oldest queued job, when it is another one: it runs first. */
  first: Pick<JobSummary, 'id' | 'job_type'> | null;
}

/**
 * Why `job` waits, from what the stores hold now; null when it does not wait (it runs or ended,
 * or an idle agent will pick it up at its next claim). The claim rule it explains is the store's
 * `claimNext` (DESIGN §3): same owner, assigned to nobody or to that agent, the oldest queued job
 * of its vine, no job of that vine running.
 */
export async function waitingFor(stores: Stores, deps: CoreDeps, job: Job): Promise<WaitingFor | null> {
  if (job.status === 'SUCCESS') return awaitingApproval(stores, job);
  if (job.status !== 'QUEUED') return null;
  let turn: VineTurn | null = null;
  if (job.vine_id !== null) {
    const running = await stores.jobs.list(job.owner_id, { vine_id: job.vine_id, status: 'PROCESSING' });
    // Newest first (by time, then insertion): the oldest, which runs next, is last.
    const queued = await stores.jobs.list(job.owner_id, { vine_id: job.vine_id, status: 'QUEUED' });
    const oldest = queued.at(-1);
    turn = { running: running[0] ?? null, first: oldest && oldest.id !== job.id ? oldest : null };
  }
  const now = deps.clock.now();
  const [agents, offers] = await Promise.all([
    readOwnerAgents(stores, job.owner_id),
    stores.jobs.standingOffers(job.owner_id, [job.id], now.toISOString()),
  ]);
  const pool = agentPoolOf(job, agents, now, deps.settings.heartbeatTimeoutSeconds);
  return whyQueuedJobWaits(turn, pool, offeredTo(offers.get(job.id), agents));
}

/** A job's standing offer, with the name of the agent it is held for. */
export interface HeldFor {
  worker: { id: string; name: string | null };
  until: string;
}

/** `offer` (a job's standing `JobOffer`, if any) with its agent's name, from the owner's agents. */
export function offeredTo(offer: JobOffer | undefined, agents: OwnerAgents): HeldFor | null {
  if (offer === undefined) return null;
  const worker = agents.workers.find((candidate) => candidate.id === offer.worker_id);
  return { worker: { id: offer.worker_id, name: worker?.name ?? null }, until: offer.until };
}

/**
 * Why a queued job waits, from its configuration's turn (null: it has none) and its agent pool:
 * the one statement of it, for a job's page and for the queue (issue 29).
 */
export function whyQueuedJobWaits(
  turn: VineTurn | null,
  pool: AgentPool,
  heldFor: HeldFor | null = null,
): WaitingFor | null {
  if (turn?.running) {
    const busyWith = turn.running;
    return {
      reason: 'vine_busy',
      message: `the configuration is busy with job ${busyWith.id} (${busyWith.job_type}); this job starts when it ends`,
      job_id: busyWith.id,
    };
  }
  if (turn?.first) {
    const before = turn.first;
    return {
      reason: 'vine_busy',
      message: `job ${before.id} (${before.job_type}) was queued on the configuration before this one and runs next`,
      job_id: before.id,
    };
  }
  const assigned = pool.assigned_worker;
  if (assigned !== null) {
    if (pool.agents.online === 0) {
      return {
        reason: 'no_agent_online',
        message: `the agent it is assigned to (${assigned.name ?? assigned.id}) is not online; start it with \`trellis-agent run\``,
      };
    }
    if (pool.agents.idle === 0) {
      return {
        reason: 'agents_busy',
        message: `the agent it is assigned to (${assigned.name}) is running another job`,
      };
    }
    return null;
  }
  if (heldFor !== null) {
    const agent = heldFor.worker.name ?? heldFor.worker.id;
    return {
      reason: 'offered',
      message: `held until ${heldFor.until} for ${agent}, the agent that ran its plan and applies it without downloading it; then any agent that may run it takes it`,
    };
  }
  if (pool.agents.online === 0) {
    const excluded = pool.excluded_worker;
    const besides = excluded ? ` other than ${excluded.name ?? excluded.id} (the agent this job destroys)` : '';
    return {
      reason: 'no_agent_online',
      message:
        pool.kind === 'organization'
          ? `no agent of the organization ${pool.org_name}${besides} is online: its jobs run only on its own agents, never on a person's. Register one with \`trellis-agent register --org ${pool.org_name} --name NAME\`, then start it with \`trellis-agent run\``
          : excluded
            ? `none of your agents${besides} is online: register one with \`trellis-agent register --name NAME\`, then start it with \`trellis-agent run\``
            : 'none of your agents is online: register one with `trellis-agent register --name NAME`, then start it with `trellis-agent run`',
    };
  }
  if (pool.agents.idle === 0) {
    return { reason: 'agents_busy', message: 'every online agent of this owner is running another job' };
  }
  return null;
}

/** A plan that must be approved before a deploy, not decided yet, and not deployed. */
async function awaitingApproval(stores: Stores, job: Job): Promise<WaitingFor | null> {
  if (job.job_type !== 'PLAN' || isSpeculativeTrigger(job.trigger) || job.approval !== null || job.vine_id === null) {
    return null;
  }
  const vine = await stores.vines.get(job.owner_id, job.vine_id);
  if (!vine?.approval?.required) return null;
  if ((await stores.jobs.listDeploysOfPlan(job.owner_id, job.id)).length > 0) return null;
  return {
    reason: 'approval',
    message: `the plan must be approved before it can be deployed: \`trellis approve ${job.id}\` (operators), or on its page`,
  };
}
