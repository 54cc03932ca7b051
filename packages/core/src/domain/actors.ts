import type { IdentityProvider } from './enums.js';

/** A person, authenticated by web session or CLI access token. */
export interface UserActor {
  userId: string;
  email: string;
  /** The provider a web session signed in with: null for the bootstrap admin, absent for a CLI token. */
  provider?: IdentityProvider | null;
}

/** An agent, authenticated by `X-Worker-ID` + `X-Worker-Token`. */
export interface WorkerActor {
  workerId: string;
  ownerId: string;
  /**
   * Set when the engine of a job authenticated with that job's state token (not the worker token):
   * only the state of that one job's vine, while it runs, is open to it.
   */
  stateJobId?: string;
}
