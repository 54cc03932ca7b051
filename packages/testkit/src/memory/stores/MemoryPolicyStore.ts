import {
  ConflictError,
  currentVersionOf,
  type OwnerIds,
  ownerList,
  type Page,
  type PageRequest,
  type Policy,
  type PolicyStore,
  type PolicyVersion,
} from '@trellis/core';
import { copy, oldestFirst, pageNewestFirst } from '../MemoryState.js';
import type { MemoryTransaction } from '../MemoryTransaction.js';

const versionKey = (policyId: string, version: number) => `${policyId}:${version}`;

export class MemoryPolicyStore implements PolicyStore {
  constructor(private readonly tx: MemoryTransaction) {}

  async create(policy: Policy): Promise<Policy> {
    this.tx.checkWrite('policies', policy.owner_id);
    if (this.tx.state.policies.has(policy.id)) {
      throw new ConflictError('already_exists', 'a record with the same key already exists');
    }
    this.tx.state.policies.set(policy.id, copy(policy));
    this.tx.state.policyVersions.set(versionKey(policy.id, policy.version), currentVersionOf(policy));
    return copy(policy);
  }

  async find(id: string): Promise<Policy | null> {
    const found = this.tx.state.policies.get(id);
    return found && this.tx.sees(found.owner_id) ? copy(found) : null;
  }

  async page(owners: OwnerIds, request: PageRequest): Promise<Page<Policy>> {
    const visible = ownerList(owners).filter((owner) => this.tx.sees(owner));
    return pageNewestFirst(
      this.tx.state.policies,
      (policy) => visible.includes(policy.owner_id),
      (policy) => policy.created_at,
      request,
    );
  }

  async update(policy: Policy): Promise<Policy | null> {
    this.tx.checkWrite('policies', policy.owner_id);
    const found = this.tx.state.policies.get(policy.id);
    if (!found || found.owner_id !== policy.owner_id) return null;
    const key = versionKey(policy.id, policy.version);
    if (this.tx.state.policyVersions.has(key)) {
      throw new ConflictError('already_exists', 'a record with the same key already exists');
    }
    this.tx.state.policyVersions.set(key, currentVersionOf(policy));
    const stored: Policy = { ...copy(policy), created_by: found.created_by, created_at: found.created_at };
    this.tx.state.policies.set(policy.id, stored);
    return copy(stored);
  }

  async versions(ownerId: string, policyId: string): Promise<PolicyVersion[]> {
    if (!this.tx.sees(ownerId)) return [];
    return [...this.tx.state.policyVersions.values()]
      .filter((version) => version.owner_id === ownerId && version.policy_id === policyId)
      .sort((a, b) => a.version - b.version)
      .map(copy);
  }

  async delete(ownerId: string, id: string): Promise<boolean> {
    const found = this.tx.state.policies.get(id);
    if (!found || found.owner_id !== ownerId || !this.tx.sees(ownerId)) return false;
    this.tx.state.policies.delete(id);
    for (const [key, version] of this.tx.state.policyVersions) {
      if (version.policy_id === id) this.tx.state.policyVersions.delete(key);
    }
    return true;
  }

  async listApplicable(ownerId: string, vineyardId: string | null): Promise<Policy[]> {
    if (!this.tx.sees(ownerId)) return [];
    return oldestFirst(
      [...this.tx.state.policies.values()].filter(
        (policy) => policy.owner_id === ownerId && (policy.vineyard_id === null || policy.vineyard_id === vineyardId),
      ),
      (policy) => policy.created_at,
    ).map(copy);
  }
}
