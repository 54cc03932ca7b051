/**
 * Policies as stored (issue 15): a Rego module with an enforcement, owned by a person or an
 * organization, applying to one vineyard's vines or to all of the owner's. Every `PUT` makes a new
 * version and keeps the old ones, so a plan's results name the version it was checked with.
 */
import type { PolicyEnforcement } from './policies.js';

export interface Policy {
  id: string;
  /** The creator for a personal policy, the organization for an organization's. */
  owner_id: string;
  created_by: string;
  org_id: string | null;
  name: string;
  enforcement: PolicyEnforcement;
  /** Only this vineyard's vines; null: every vine of the owner. */
  vineyard_id: string | null;
  /** The current version (1 at creation). */
  version: number;
  /** The Rego source of the current version. */
  module: string;
  created_at: string;
  updated_at: string;
}

/** One version of a policy, kept for as long as the policy. */
export interface PolicyVersion {
  policy_id: string;
  owner_id: string;
  version: number;
  name: string;
  enforcement: PolicyEnforcement;
  module: string;
  created_by: string;
  created_at: string;
}

/** A module's largest size in bytes (UTF-8). */
export const MAX_POLICY_MODULE_BYTES = 64 * 1024;

/** The version a policy's current state is (what its store keeps next to the policy). */
export function currentVersionOf(policy: Policy): PolicyVersion {
  return {
    policy_id: policy.id,
    owner_id: policy.owner_id,
    version: policy.version,
    name: policy.name,
    enforcement: policy.enforcement,
    module: policy.module,
    created_by: policy.created_by,
    created_at: policy.updated_at,
  };
}

/**
 * Whether a module declares a `deny` rule, read from its text: the fallback when the control plane
 * has no engine to parse it with (the agent then reports what the engine says).
 */
export function declaresDenyRule(module: string): boolean {
  return /^\s*deny\b\s*(?:contains\b|\[|:=|=|if\b|\{)/m.test(module);
}
