import type { WorkerStatus } from '../domain/enums.js';
import type { CloudIdentity, Job, PublicWorker, Vine, VineComponents, Vineyard, Worker } from '../domain/records.js';
import { redactSnapshot, redactVariables } from '../config/configSnapshot.js';

/** What people see of a vine: sensitive variable values replaced, identity and components joined. */
export interface VineView extends Vine {
  cloud_identity: CloudIdentity | null;
  components: VineComponents;
}

export interface VineyardView extends Vineyard {
  vines: Vine[];
}

export interface WorkerView extends PublicWorker {
  status: WorkerStatus;
}

export function vineForPeople(vine: Vine): Vine {
  return { ...vine, variables: redactVariables(vine.variables) };
}

/** Jobs as people see them; agents get the unredacted snapshot from the claim. */
export function jobForPeople(job: Job): Job {
  return { ...job, config_snapshot: redactSnapshot(job.config_snapshot) };
}

export function publicWorker(worker: Worker): PublicWorker {
  const { token_hash: _hidden, ...rest } = worker;
  return rest;
}
