import type { OrgRole } from './roles.js';
import type { ApprovalSetting } from './policies.js';
import type { VcsJobTrigger } from './vcs.js';
/**
 * The records of SPEC §2 and DESIGN §2. Field names are snake_case because they are the API's
 * field names; times are ISO-8601 UTC strings; ids are UUIDs except log chunk ids (integers).
 */
import type { EngineName, ExecutionMode, IdentityProvider, VineStatus, WorkerMode } from './enums.js';

export * from './jobRecords.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export interface User {
  id: string;
  email: string;
  name: string;
  created_at: string;
}

export interface Identity {
  user_id: string;
  provider: IdentityProvider;
  provider_user_id: string;
  /** Encrypted at rest by the store's caller; the store keeps whatever it is given. */
  provider_token: string | null;
  scopes: string;
}

export interface CliLogin {
  device_code: string;
  verification_code: string;
  profile_id: string | null;
  /** The provider the approving web session signed in with (null: the bootstrap admin). */
  provider: IdentityProvider | null;
  created_at: string;
  expires_at: string;
  attempts: number;
  consumed_at: string | null;
}

export interface RefreshTokenRecord {
  id: string;
  user_id: string;
  family_id: string;
  expires_at: string;
  rotated_at: string | null;
  revoked_at: string | null;
}

/**
 * An API token for automation (issue 12). Only the SHA-256 of the secret is kept. A personal
 * token's owner is its creator (`org_id` null, `role` null: it acts as the creator); an
 * organization token's owner is the organization, and it acts only there, with `role` capped by
 * the creator's current role.
 */
export interface ApiToken {
  id: string;
  /** The creator for a personal token, the organization for an organization token. */
  owner_id: string;
  created_by: string;
  org_id: string | null;
  name: string;
  role: OrgRole | null;
  /** Lowercase hex SHA-256 of the token. */
  token_hash: string;
  created_at: string;
  /** Null: the token never expires. */
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** An organization (issue 12): an owner of records, like a user, shared by its members. */
export interface Org {
  id: string;
  name: string;
  created_at: string;
}

/**
 * A member of an organization. Every member but the creator was invited by email (issue 23): the
 * membership is pending (`user_id` null, `joined_at` null) until the person signed in with that
 * verified email accepts it.
 */
export interface OrgMember {
  /** The membership's own id (what `/api/orgs/{id}/members/{member}` names). */
  id: string;
  org_id: string;
  user_id: string | null;
  email: string;
  role: OrgRole;
  created_at: string;
  /** Null until the invited person accepts: a pending membership is an invitation (issue 23). */
  joined_at: string | null;
  /** The member who invited this email; null for the organization's creator (and invitations made before issue 23). */
  invited_by: string | null;
}

export interface Vineyard {
  id: string;
  owner_id: string;
  name: string;
  created_at: string;
}

/**
 * How a job gets cloud credentials (issue 16): `assume_role` — the agent assumes an AWS role with
 * an external id using the host's own AWS credentials; `oidc` — the job gets a token signed by
 * this control plane (the OIDC issuer), which the cloud exchanges for short-lived credentials.
 */
export type CloudIdentitySettings =
  | { kind: 'assume_role'; provider: 'aws'; role_arn: string; external_id: string }
  | { kind: 'oidc'; provider: 'aws'; role_arn: string; audience: string | null; session_duration: number | null }
  | {
      kind: 'oidc';
      provider: 'gcp';
      workload_identity_provider: string;
      service_account_email: string | null;
      audience: string | null;
    }
  | { kind: 'oidc'; provider: 'azure'; tenant_id: string; client_id: string; audience: string | null };

export type CloudIdentity = { id: string; owner_id: string } & CloudIdentitySettings;
export type OidcCloudIdentitySettings = Extract<CloudIdentitySettings, { kind: 'oidc' }>;

/** The settings of an identity without its id and owner (what a claim hands the agent). */
export function cloudIdentitySettings(identity: CloudIdentity): CloudIdentitySettings {
  const { id: _id, owner_id: _owner, ...settings } = identity;
  return settings as CloudIdentitySettings;
}

export const SIGNING_ALGORITHMS = ['RS256', 'ES256'] as const;
export type SigningAlgorithm = (typeof SIGNING_ALGORITHMS)[number];

/**
 * A key the OIDC issuer signs job tokens with (issue 16). System record: owned by nobody. The
 * private key is sealed with the SecretBox (context `signing-key:<id>`).
 */
export interface SigningKey {
  /** The JWK `kid`. */
  id: string;
  algorithm: SigningAlgorithm;
  /** The public JWK (kty and key material; `kid`, `alg` and `use` are added when served). */
  public_jwk: JsonObject;
  private_key_sealed: string;
  created_at: string;
  /** When a newer key took over signing; null: this key signs. */
  retired_at: string | null;
  /** A retired key is served in the JWKS until every token it signed has expired. */
  published_until: string | null;
}

export interface VariableValue {
  value: string;
  sensitive: boolean;
  /** What it is for, for people (set through the Terraform Cloud protocol's `/vars`). */
  description?: string;
}
export type Variables = Record<string, VariableValue>;

export type VineSource =
  /** `commit`: the exact commit to check out (a git-driven job pins it in its snapshot); absent: `ref`'s head. */
  | { type: 'git'; url: string; ref: string | null; path: string | null; commit?: string }
  | { type: 'inline'; files: Record<string, string> };

export interface Engine {
  name: EngineName;
  version: string | null;
}

/** How often the vine is checked for drift (issue 14); null: never on a schedule. */
export interface DriftDetection {
  interval_minutes: number;
}

export const DRIFT_STATUSES = ['in_sync', 'drifted', 'unknown'] as const;
export type DriftStatus = (typeof DRIFT_STATUSES)[number];

/** The result of the vine's last drift check (a speculative PLAN job with `trigger: {type:"drift"}`). */
export interface DriftResult {
  status: DriftStatus;
  checked_at: string;
  job_id: string;
  changes: { add: number; change: number; destroy: number } | null;
  /** Why a check that failed is `unknown`. */
  error?: string;
}

/** Vines whose successful DEPLOY queues a PLAN of this vine (issue 14 run triggers). */
export interface VineTriggers {
  after: string[];
}

/**
 * Why a job was queued: by a person, by the drift scheduler, by an upstream vine's deploy, or by
 * a person's stock `tofu` CLI through the Terraform Cloud protocol (`cli`, issue 27: a remote run).
 */
export type JobTrigger =
  | { type: 'manual' }
  | { type: 'cli' }
  | { type: 'drift' }
  | { type: 'upstream'; vine_id: string; job_id: string }
  | VcsJobTrigger;

/**
 * A speculative plan is never deployed: a drift check, or the plan of a pull request (issue 13).
 */
export function isSpeculativeTrigger(trigger: JobTrigger): boolean {
  return SPECULATIVE_TRIGGER_TYPES.includes(trigger.type);
}

/** The trigger types of speculative plans (`isSpeculativeTrigger`), as data for the stores. */
export const SPECULATIVE_TRIGGER_TYPES: readonly JobTrigger['type'][] = ['drift', 'pull_request'];

export interface Vine {
  id: string;
  owner_id: string;
  vineyard_id: string;
  name: string;
  project_name: string;
  cloud_identity_id: string | null;
  source: VineSource;
  variables: Variables;
  engine: Engine;
  status: VineStatus;
  status_message: string | null;
  drift_detection: DriftDetection | null;
  /** When the scheduler next queues a drift check (null: no schedule). */
  next_drift_check_at: string | null;
  drift: DriftResult | null;
  triggers: VineTriggers;
  /** Whether a DEPLOY needs an approved plan (issue 15); null: no approval needed. */
  approval: ApprovalSetting | null;
  /** The workspace's tags (issue 26: the CLI's `tags` strategy), sorted, unique. */
  tags: string[];
  /** The version string the CLI set on its workspace, else `latest` (issue 26). */
  terraform_version: string;
  execution_mode: ExecutionMode;
  /** The other settings of its workspace (issue 26), as the CLI and go-tfe set them. */
  workspace_settings: WorkspaceSettings;
  created_at: string;
  updated_at: string;
}

/** A workspace's settings beside name, tags, version and execution mode (`tfe/workspaceSettings.ts`). */
export interface WorkspaceSettings {
  description: string;
  auto_apply: boolean;
  auto_apply_run_trigger: boolean;
  allow_destroy_plan: boolean;
  assessments_enabled: boolean;
  file_triggers_enabled: boolean;
  queue_all_runs: boolean;
  speculative_enabled: boolean;
  structured_run_output_enabled: boolean;
  global_remote_state: boolean;
  /** Where runs start, relative to the configuration's root ('' is the root). */
  working_directory: string;
  trigger_prefixes: string[];
  trigger_patterns: string[];
  auto_destroy_at: string | null;
  /** Where the workspace was made from, for people (`source-name`, `source-url`). */
  source_name: string;
  source_url: string;
}

/** The workspace fields of a vine (issue 26) and what a vine made without them gets. */
export type VineWorkspaceFields = Pick<Vine, 'tags' | 'terraform_version' | 'execution_mode' | 'workspace_settings'>;
/** HCP Terraform's defaults, except `global_remote_state`: any member may read a vine's outputs here. */
export const DEFAULT_WORKSPACE_SETTINGS: Readonly<WorkspaceSettings> = Object.freeze({
  description: '',
  auto_apply: false,
  auto_apply_run_trigger: false,
  allow_destroy_plan: true,
  assessments_enabled: false,
  file_triggers_enabled: true,
  queue_all_runs: false,
  speculative_enabled: true,
  structured_run_output_enabled: true,
  global_remote_state: true,
  working_directory: '',
  trigger_prefixes: [],
  trigger_patterns: [],
  auto_destroy_at: null,
  source_name: '',
  source_url: '',
});
export const DEFAULT_VINE_WORKSPACE: Readonly<VineWorkspaceFields> = Object.freeze({
  tags: [],
  terraform_version: 'latest',
  execution_mode: 'remote',
  workspace_settings: DEFAULT_WORKSPACE_SETTINGS,
});
/** A vine to create: the workspace fields may be left to their defaults. */
export type NewVine = Omit<Vine, keyof VineWorkspaceFields> & Partial<VineWorkspaceFields>;

export const COMPONENT_KINDS = ['cluster', 'argocd', 'outputs'] as const;
export type ComponentKind = (typeof COMPONENT_KINDS)[number];

/** What finalizeDeployment writes: one row per kind, each remembering the job that wrote it. */
export interface VineComponents {
  cluster: { name: string | null; endpoint: string | null; job_id: string } | null;
  argocd: { url: string; job_id: string } | null;
  /** `sensitive`: the names of the sensitive outputs (never their values); absent before issue 25. */
  outputs: { values: JsonObject; sensitive?: string[]; job_id: string } | null;
}

export interface Worker {
  id: string;
  owner_id: string;
  name: string;
  mode: WorkerMode;
  token_hash: string;
  last_heartbeat: string | null;
  version: string | null;
  metadata: JsonObject;
  created_at: string;
  destroyed_at: string | null;
}

/** A worker as it may leave the system: never with its token hash. */
export type PublicWorker = Omit<Worker, 'token_hash'>;

export interface WorkerRelease {
  version: string;
  release_notes: string;
  published_at: string;
}

export interface PlanArtifact {
  job_id: string;
  owner_id: string;
  storage_key: string;
  size: number;
  sha256: string;
  created_at: string;
}

/**
 * Where a plan's change document (issue 29) lives: an object beside the plan file, recorded on the
 * plan's artifact. The record is the one truth about its bytes, as for the plan file.
 */
export interface PlanChangesRecord {
  job_id: string;
  owner_id: string;
  storage_key: string;
  size: number;
  sha256: string;
}

/** One version of a vine's OpenTofu/Terraform state, kept through the artifact store. */
export interface StateVersion {
  id: number;
  owner_id: string;
  vine_id: string;
  /** The state's own `serial` and `lineage`. */
  serial: number;
  lineage: string;
  size: number;
  sha256: string;
  storage_key: string;
  /** The job whose engine wrote it. */
  job_id: string | null;
  /** The person whose token wrote it (the cloud block, an upload, a rollback); null: a job's engine. */
  created_by: string | null;
  /**
   * Set on a version the Terraform Cloud protocol created ahead of its bytes: the id its
   * `hosted-state-upload-url` was signed for (issue 26).
   */
  upload_id: string | null;
  /**
   * Written by the engine of a job the control plane had already failed as lost (issue 30): a
   * person reviews it (`reviewed_at`); until then the vine shows `state_after_lost`.
   */
  after_lost: boolean;
  /** Refused as the current state (a later job had the vine): kept for recovery only. */
  rejected: boolean;
  reviewed_at: string | null;
  reviewed_by: string | null;
  created_at: string;
}

/** What a writer gives `StateStore.addVersion`: a version is neither late nor refused unless it says so. */
export type NewStateVersion = Omit<StateVersion, 'id' | 'after_lost' | 'rejected' | 'reviewed_at' | 'reviewed_by'> &
  Partial<Pick<StateVersion, 'after_lost' | 'rejected'>>;

/** The lock of a vine's state (the `http` backend's lock info, kept as sent). */
export interface StateLock {
  owner_id: string;
  vine_id: string;
  lock_id: string;
  info: JsonObject;
  created_at: string;
}
