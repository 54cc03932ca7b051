import type { RequestContext } from './audit.js';
import type { IdentityProvider } from './enums.js';
import type { OrgRole } from './roles.js';

/**
 * A person, authenticated by web session, CLI access token or API token. Which organizations the
 * person belongs to is read at every request, so a removed member loses access at once: by core
 * when it needs them, or with the API token that authenticated the request (`memberships`).
 */
export interface UserActor {
  userId: string;
  email: string;
  /** The provider a web session signed in with: null for the bootstrap admin, absent for a CLI token. */
  provider?: IdentityProvider | null;
  /**
   * Set when the request came with an API token (`trt_…`). An organization token (`orgId` set)
   * acts only within that organization, with the lower of its `role` and its creator's current
   * role; a personal token acts as its creator.
   */
  apiToken?: { id: string; orgId: string | null; role: OrgRole | null };
  /** The HTTP request acting (for the audit log); absent outside a request. */
  request?: RequestContext;
  /**
   * The person's organization memberships as read with the API token that authenticated this
   * request, in the same unit of work, so its access checks need not read them again. For this
   * request only: an actor carrying them is never kept beyond it.
   */
  memberships?: readonly { org_id: string; role: OrgRole }[];
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
  /** The HTTP request acting (for the audit log); absent outside a request. */
  request?: RequestContext;
}
