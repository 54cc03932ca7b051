/**
 * The audit log (issue 14): who changed what, when, from where. Entries are appended in the same
 * unit of work as the change they record, so a rolled-back change leaves none, and are never
 * changed or deleted except by the retention prune.
 */

/** Where a request came from, as the HTTP layer saw it (`X-Request-Id`, client address). */
export interface RequestContext {
  id: string;
  ip: string;
}

export const AUDIT_ACTOR_TYPES = ['user', 'token', 'worker', 'system'] as const;
export type AuditActorType = (typeof AUDIT_ACTOR_TYPES)[number];

/** Who acted: a person (web session or CLI), an API token (`id` is the token's), an agent, or the server. */
export interface AuditActor {
  type: AuditActorType;
  id: string | null;
  email?: string;
}

/** What was acted on. */
export interface AuditTarget {
  type: string;
  id: string;
}

/** The actions recorded, `<record>.<verb>`; new ones are added here (and to docs/audit.md). */
export const AUDIT_ACTIONS = [
  'session.sign_in',
  'session.sign_out',
  'user.invite',
  'cli_login.approve',
  'cli.logout',
  'vineyard.create',
  'vine.create',
  'vine.update',
  'job.create',
  'job.cancel',
  'job.fail',
  'job.requeue',
  'plan.approve',
  'plan.reject',
  'plan.override',
  'worker.register',
  'token.create',
  'token.revoke',
  'org.create',
  'org.rename',
  'org.delete',
  'member.add',
  'member.accept',
  'member.decline',
  'member.set_role',
  'member.remove',
  'notification.create',
  'notification.delete',
  'policy.create',
  'policy.update',
  'policy.delete',
  'vcs.connect',
  'vcs.disconnect',
  'tfe_login.approve',
  'vine.delete',
  'vineyard.create_default',
  'vineyard.update',
  'vineyard.delete',
  'state.lock',
  'state.unlock',
  'state.force_unlock',
  'state.after_lost_acknowledge',
  'state.write',
  'state.rollback',
  'run.confirm',
  'run.discard',
  'registry.mirror.push',
  'registry.mirror.pull',
  'registry.mirror.delete',
  'module_version.publish',
  'module_version.deprecate',
  'module_version.undeprecate',
  'module_version.delete',
  'module.delete',
  'provider_version.publish',
  'provider_platform.upload',
  'provider_version.delete',
  'gpg_key.add',
  'gpg_key.delete',
  'module_repository.connect',
  'module_repository.disconnect',
  'module_repository.tag',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export function isAuditAction(value: unknown): value is AuditAction {
  return typeof value === 'string' && (AUDIT_ACTIONS as readonly string[]).includes(value);
}

/** Free-form facts about the change; never a secret (tokens, state, sensitive variables). */
export type AuditDetails = Record<string, string | number | boolean | null>;

export interface AuditEntry {
  id: string;
  at: string;
  actor: AuditActor;
  action: AuditAction;
  target: AuditTarget;
  /** Whose log the entry is in: the user's or the organization's. */
  owner_id: string;
  request_id: string | null;
  ip: string | null;
  details: AuditDetails;
}

/** Filters of `GET /api/audit`. */
export interface AuditFilter {
  action?: AuditAction;
  /** An actor's id or email. */
  actor?: string;
  target_id?: string;
}
