import type { JobSummary, Worker } from '../domain/records.js';
import { deriveWorkerStatus } from '../domain/workerStatus.js';
import type { Stores } from '../ports/UnitOfWork.js';

/**
 * The agents that may take a queued job (issue 29), by the claim's rule (DESIGN §3,
 * `JobStore.claimNext`): an agent claims only its owner's jobs, so a person's jobs run on their
 * own agents and an organization's on the organization's pool; a job assigned to an agent
 * (`assigned_worker_id`) runs on that one only; a DESTROY_WORKER job on any agent of the pool but
 * the one it destroys (`target_worker_id`).
 */
export interface AgentPool {
  /** `personal`: the owner's own agents; `organization`: the organization's pool. */
  kind: 'personal' | 'organization';
  owner_id: string;
  /** The organization's name; null for a person's own agents. */
  org_name: string | null;
  /** The one agent that may take the job (`assigned_worker_id`); null: any agent of the pool. */
  assigned_worker: PoolAgent | null;
  /** The agent that may not (a DESTROY_WORKER's target); null: none is left out. */
  excluded_worker: PoolAgent | null;
  /** The agents that may take the job, by what they do now. */
  agents: { total: number; online: number; idle: number };
}

/** An agent a pool names; `name` null when the agent no longer exists. */
export interface PoolAgent {
  id: string;
  name: string | null;
}

/** What decides an owner's pools, read once per owner: its agents and which of them run a job. */
export interface OwnerAgents {
  ownerId: string;
  /** The organization, when the owner is one. */
  org: { id: string; name: string } | null;
  workers: readonly Worker[];
  busyWorkerIds: readonly string[];
}

export async function readOwnerAgents(stores: Stores, ownerId: string): Promise<OwnerAgents> {
  const [org, workers, busyWorkerIds] = await Promise.all([
    stores.orgs.get(ownerId),
    stores.workers.list(ownerId),
    stores.jobs.busyWorkerIds(ownerId),
  ]);
  return { ownerId, org: org && { id: org.id, name: org.name }, workers, busyWorkerIds };
}

/** The pool of `job` among its owner's agents, counted as they are at `now`. */
export function agentPoolOf(
  job: Pick<JobSummary, 'owner_id' | 'assigned_worker_id' | 'target_worker_id'>,
  owner: OwnerAgents,
  now: Date,
  heartbeatTimeoutSeconds: number,
): AgentPool {
  const agent = (id: string | null): PoolAgent | null =>
    id === null ? null : { id, name: owner.workers.find((worker) => worker.id === id)?.name ?? null };
  const eligible = owner.workers.filter(
    (worker) =>
      (job.assigned_worker_id === null || worker.id === job.assigned_worker_id) && worker.id !== job.target_worker_id,
  );
  const statuses = eligible.map((worker) =>
    deriveWorkerStatus(worker, owner.busyWorkerIds.includes(worker.id), now, heartbeatTimeoutSeconds),
  );
  return {
    kind: owner.org ? 'organization' : 'personal',
    owner_id: job.owner_id,
    org_name: owner.org?.name ?? null,
    assigned_worker: agent(job.assigned_worker_id),
    excluded_worker: agent(job.target_worker_id),
    agents: {
      total: statuses.filter((status) => status !== 'DESTROYED').length,
      online: statuses.filter((status) => status === 'ONLINE' || status === 'BUSY').length,
      idle: statuses.filter((status) => status === 'ONLINE').length,
    },
  };
}

/**
 * The pool in a few words, for the CLI's table and the web's queue: "your agents", "agents of
 * acme", "agent build-1 only", "your agents but old-1 (destroyed by this job)".
 */
export function describeAgentPool(
  pool: Pick<AgentPool, 'kind' | 'org_name' | 'assigned_worker' | 'excluded_worker'>,
): string {
  const nameOf = (agent: PoolAgent) => agent.name ?? agent.id;
  const owners = pool.kind === 'organization' ? `agents of ${pool.org_name}` : 'your agents';
  if (pool.assigned_worker) return `agent ${nameOf(pool.assigned_worker)} only (${owners})`;
  if (pool.excluded_worker) return `${owners} but ${nameOf(pool.excluded_worker)} (the agent it destroys)`;
  return owners;
}

/** How many agents of the pool can take the job now: "1 idle, 2 online of 3". */
export function describePoolAgents(agents: AgentPool['agents']): string {
  return `${agents.idle} idle, ${agents.online} online of ${agents.total}`;
}
