import type { WorkerStatus } from '../domain/enums.js';
import {
  type CloudIdentity,
  isSpeculativeTrigger,
  type Job,
  type JobSummary,
  type PublicWorker,
  type Vine,
  type VineComponents,
  type VineSourceSummary,
  type Vineyard,
  type Worker,
} from '../domain/records.js';
import { redactSnapshot, redactVariables, summarizeSource } from '../snapshot/configSnapshot.js';
import { redactSource } from '../domain/gitSource.js';
import type { PlanActions } from '../jobs/deployGate.js';
import type { FleetVine, PlanPolicyResult } from '../fleet/fleet.js';

/** What people see of a vine: sensitive variable values replaced, identity and components joined. */
export interface VineView extends Vine {
  cloud_identity: CloudIdentity | null;
  components: VineComponents;
}

/** A job as people see it: `speculative` when it can never be deployed (a drift check, a pull request's plan). */
export interface JobView extends Job {
  speculative: boolean;
  /**
   * Of a plan, in the detail of one job: what the person asking may do with it (apply, approve,
   * reject, override) and why not, by the deploy gate's rule (issue 23); null when it is not a
   * plan of a vine. Absent from lists.
   */
  actions?: PlanActions | null;
}

/** A job in a list (and the queue): its summary, and whether it is speculative. */
export interface JobSummaryView extends JobSummary {
  speculative: boolean;
}

export interface VineyardView extends Vineyard {
  vines: Vine[];
}

/** A vine in a list: no files, no variables. `GET /api/cli/configurations/{name}` has them. */
export interface VineSummary extends Omit<Vine, 'source' | 'variables'> {
  source: VineSourceSummary;
}

/**
 * A vine in the configurations list (the fleet, issue 29): its summary, the name of its vineyard
 * (null when it cannot be read) and the policy result of its latest plan.
 */
export interface FleetVineSummary extends VineSummary {
  vineyard_name: string | null;
  policy: PlanPolicyResult;
}

export interface VineyardSummary extends Vineyard {
  vines: VineSummary[];
}

export interface WorkerView extends PublicWorker {
  status: WorkerStatus;
}

export function vineForPeople(vine: Vine): Vine {
  return { ...vine, source: redactSource(vine.source), variables: redactVariables(vine.variables) };
}

/** Jobs as people see them; agents get the unredacted snapshot from the claim. */
export function jobForPeople(job: Job): JobView {
  return {
    ...job,
    config_snapshot: redactSnapshot(job.config_snapshot),
    speculative: isSpeculativeTrigger(job.trigger),
  };
}

export function publicWorker(worker: Worker): PublicWorker {
  const { token_hash: _hidden, ...rest } = worker;
  return rest;
}

export function fleetVineSummary(vine: FleetVine, vineyardName: string | null): FleetVineSummary {
  const { policy, ...rest } = vine;
  return { ...vineSummary(rest), vineyard_name: vineyardName, policy };
}

export function vineSummary(vine: Vine): VineSummary {
  const { source, variables: _omitted, ...rest } = vine;
  return { ...rest, source: summarizeSource(source) };
}
