import type { Page, PageRequest } from '../domain/pagination.js';
import type { Policy, PolicyVersion } from '../domain/policyRecords.js';
import type { OwnerIds } from './UnitOfWork.js';

/**
 * Policies and their versions (issue 15). Rows belong to the policy's owner; deleting a policy
 * deletes its versions (plans keep their results, which name the version they were checked with).
 */
export interface PolicyStore {
  /** Stores the policy and its version 1. */
  create(policy: Policy): Promise<Policy>;
  /** The policy with this id among the rows the unit of work's scope sees. */
  find(id: string): Promise<Policy | null>;
  /** The owners' policies, newest first. */
  page(owners: OwnerIds, request: PageRequest): Promise<Page<Policy>>;
  /**
   * Makes `policy` (whose `version` is one more than the stored one's) the current version and
   * keeps it as a version; null when the policy is gone. A second update racing for the same
   * version number fails with `already_exists`.
   */
  update(policy: Policy): Promise<Policy | null>;
  /** Every version of the policy, oldest first. */
  versions(ownerId: string, policyId: string): Promise<PolicyVersion[]>;
  /** Deletes it and its versions; false when there was none. */
  delete(ownerId: string, id: string): Promise<boolean>;
  /** The owner's policies that apply to a vine of this vineyard (its own and the owner-wide ones), oldest first. */
  listApplicable(ownerId: string, vineyardId: string | null): Promise<Policy[]>;
}
