/**
 * The registry of problem codes (issue 11 §6), like Yarn's message names: every `code` a
 * problem+json answer can carry is defined here once, with its HTTP status and a one-line
 * meaning. A code, once published, is never removed nor given another status or meaning; a new
 * failure gets a new code. `docs/api.md` lists them all (`npm run docs:api`), and a test checks
 * that every code thrown in the sources is here with the status it is thrown with.
 *
 * Statuses are plain numbers: core knows no HTTP, the registry only records what `http` sends.
 */

export interface ProblemCodeInfo {
  readonly status: number;
  /** One line: what happened, for the reader of a problem. */
  readonly meaning: string;
}

export const PROBLEM_CODES = {
  // ---- 400: the request is malformed
  invalid_authorization_request: {
    status: 400,
    meaning: 'the `tofu login` authorization request is not one the CLI makes (client, loopback redirect, PKCE S256)',
  },
  unsupported_grant_type: {
    status: 400,
    meaning: 'the token request of `tofu login` is not an authorization-code grant',
  },
  validation_failed: { status: 400, meaning: 'a field is missing, malformed or out of range; see `errors`' },
  malformed_json: { status: 400, meaning: 'the request body is not valid JSON' },
  request_aborted: { status: 400, meaning: 'the client aborted the request before its body was read' },
  missing_file: { status: 400, meaning: 'the multipart upload holds no file' },
  invalid_lock: { status: 400, meaning: 'the state lock info carries no ID' },
  invalid_next: { status: 400, meaning: 'the `next` of a sign-in is not a same-origin path' },
  invalid_artifact_key: { status: 400, meaning: 'an artifact object name is not one the server makes' },
  invalid_artifacts_url: { status: 400, meaning: 'the artifact store URL is not valid' },
  authorization_pending: { status: 400, meaning: 'the device login is not approved in the browser yet; poll again' },
  expired_token: { status: 400, meaning: 'the device login expired; run the login again' },
  invalid_grant: {
    status: 400,
    meaning: 'the device login was already used, or its verification code is wrong or dead',
  },
  invalid_state: { status: 401, meaning: 'the sign-in state is missing, expired or from another browser' },
  invalid_state_file: { status: 400, meaning: 'the state is not a JSON object with a serial and a lineage' },
  notification_url_refused: {
    status: 400,
    meaning:
      'a notification URL is not https://, carries credentials, or reaches a private, loopback or link-local address',
  },
  gpg_key_invalid: { status: 400, meaning: 'the text is not one ASCII-armored OpenPGP public key' },
  // ---- 401: no or bad credentials
  invalid_signed_url: {
    status: 401,
    meaning: 'a signed URL is not valid, has expired, or is for another object or verb',
  },
  unauthenticated: { status: 401, meaning: 'the request carries no credentials' },
  invalid_token: { status: 401, meaning: 'the bearer token is not valid' },
  token_expired: { status: 401, meaning: 'the bearer token has expired; refresh it' },
  session_expired: { status: 401, meaning: 'the web session has expired; sign in again' },
  invalid_worker_credentials: { status: 401, meaning: 'the worker id and token do not match a live worker' },
  invalid_state_token: { status: 401, meaning: 'the job state token is not valid for this job or worker' },
  invalid_release_secret: { status: 401, meaning: 'the release secret is wrong' },
  invalid_bootstrap_token: { status: 401, meaning: 'the bootstrap sign-in link is not valid or was already used' },
  invalid_sign_in_link: { status: 401, meaning: 'the one-time sign-in link is not valid, expired or was already used' },
  secret_unreadable: { status: 401, meaning: 'a stored secret can no longer be decrypted (the key changed)' },
  access_denied: { status: 401, meaning: 'the sign-in was cancelled at the provider' },
  provider_error: { status: 401, meaning: 'the sign-in provider refused the sign-in' },
  provider_mismatch: { status: 401, meaning: 'the sign-in answer came from another provider than it was started for' },
  invalid_id_token: { status: 401, meaning: "the provider's ID token failed verification" },
  provider_token_expired: { status: 401, meaning: "the git provider's token has expired; sign in again" },
  webhook_signature_invalid: {
    status: 401,
    meaning: "the webhook delivery's signature is missing or does not match the secret of its repository's connection",
  },
  // ---- 403: authenticated, not allowed
  csrf_rejected: { status: 403, meaning: 'a cross-site request was refused' },
  email_not_verified: { status: 403, meaning: 'the sign-in account has no verified email address' },
  job_not_claimed_by_worker: { status: 403, meaning: 'the job is not claimed by the calling worker' },
  not_this_worker: { status: 403, meaning: 'a worker may act only on itself' },
  token_not_allowed: {
    status: 403,
    meaning: 'API tokens cannot create, revoke or (organization tokens) list other tokens',
  },
  org_token_not_allowed: {
    status: 403,
    meaning:
      "an organization API token cannot do what only a person does: create organizations, use its creator's provider sign-ins, answer invitations",
  },
  job_token_read_only: { status: 403, meaning: "a job's registry token only reads the registry of the job's owner" },
  insufficient_role: {
    status: 403,
    meaning: "the caller's role in the organization is too low; see `required_role` and `role`",
  },
  separate_approver_required: {
    status: 403,
    meaning: 'the configuration needs a separate approver: the person who queued the plan cannot approve it',
  },
  state_not_for_worker: { status: 403, meaning: "the state is not the calling worker's job's configuration" },
  state_read_only: {
    status: 403,
    meaning:
      "the job is a speculative plan (a pull request's plan, a drift check): it may read the state, never write, lock or unlock it",
  },
  // ---- 404: missing, or another owner's (the two look the same)
  workspace_not_found: { status: 404, meaning: 'no such workspace (vine) in that organization' },
  project_not_found: { status: 404, meaning: 'no such project (vineyard)' },
  state_version_not_found: { status: 404, meaning: 'no such state version (or none yet)' },
  output_not_found: { status: 404, meaning: 'no such state version output' },
  variable_not_found: { status: 404, meaning: 'no such workspace variable' },
  route_not_found: { status: 404, meaning: 'no route for this method and path' },
  artifact_not_found: { status: 404, meaning: 'no such artifact' },
  cli_login_not_found: { status: 404, meaning: 'no such device login' },
  cloud_identity_not_found: { status: 404, meaning: 'no such cloud identity' },
  configuration_not_found: { status: 404, meaning: 'no such configuration (vine)' },
  vineyard_not_found: { status: 404, meaning: 'no such vineyard' },
  job_not_found: { status: 404, meaning: 'no such job' },
  run_not_found: { status: 404, meaning: 'no such run (a remote run of the stock CLI)' },
  plan_job_not_found: { status: 404, meaning: 'the plan job of an apply does not exist' },
  plan_artifact_not_found: { status: 404, meaning: 'the job has no plan artifact' },
  plan_changes_not_found: {
    status: 404,
    meaning:
      'the job has no change document: not a PLAN, not succeeded (yet), or planned by an agent older than change documents',
  },
  configuration_version_not_found: { status: 404, meaning: 'no configuration version of that id for the job' },
  worker_not_found: { status: 404, meaning: 'no such worker' },
  notification_not_found: { status: 404, meaning: 'no such notification' },
  policy_not_found: { status: 404, meaning: 'no such policy' },
  vcs_not_connected: { status: 404, meaning: 'the configuration (vine) is not connected to a repository' },
  token_not_found: { status: 404, meaning: 'no such API token (or it is revoked)' },
  user_not_found: { status: 404, meaning: 'no such user' },
  org_not_found: { status: 404, meaning: 'no such organization, or the caller is not a member' },
  module_not_found: { status: 404, meaning: 'no such module in the registry namespace' },
  module_version_not_found: { status: 404, meaning: 'no such version of the registry module' },
  module_repository_not_found: {
    status: 404,
    meaning: 'the registry module is not connected to a git repository (trellis modules connect)',
  },
  namespace_not_found: {
    status: 404,
    meaning: 'no such registry namespace: an organization the caller belongs to, or their personal namespace',
  },
  member_not_found: { status: 404, meaning: 'no such member of the organization' },
  mirror_archive_not_found: { status: 404, meaning: "no such archive in the namespace's provider mirror" },
  mirror_provider_not_found: {
    status: 404,
    meaning: 'the provider mirror holds no archive of that provider (or of that version)',
  },
  invitation_not_found: { status: 404, meaning: 'no such pending invitation at the email of the caller' },
  provider_not_configured: { status: 404, meaning: 'no sign-in provider of this name is configured' },
  provider_not_found: { status: 404, meaning: 'no such provider in the namespace of the registry' },
  provider_version_not_found: { status: 404, meaning: 'no such version of the provider' },
  provider_platform_not_found: { status: 404, meaning: 'the provider version has no build for this os and arch' },
  gpg_key_not_found: { status: 404, meaning: 'the namespace has no GPG key of this id' },
  // ---- 409: well-formed, but clashes with the current state
  workspace_locked: { status: 409, meaning: 'the workspace (its state) is locked by a run or another person' },
  workspace_not_locked: { status: 409, meaning: 'the workspace is already unlocked' },
  state_lock_required: {
    status: 409,
    meaning: 'a state version is written by the holder of the workspace lock: lock it first',
  },
  state_lineage_mismatch: {
    status: 409,
    meaning: "the state's lineage is not the current state's; push with force to replace it",
  },
  state_serial_behind: {
    status: 409,
    meaning: "the state's serial is behind the current state's; push with force to replace it",
  },
  configuration_has_jobs: { status: 409, meaning: 'the configuration has run Trellis jobs, so its history stays' },
  workspace_not_safe_to_delete: {
    status: 409,
    meaning: 'the workspace is locked or its state still manages resources',
  },
  variable_exists: { status: 409, meaning: 'the workspace already has a variable of that name' },
  configuration_missing: {
    status: 409,
    meaning: 'the workspace has no configuration in Trellis (the stock CLI runs it); Trellis jobs cannot run it',
  },
  mirror_archive_exists: {
    status: 409,
    meaning: 'the provider mirror already holds other bytes for that provider, version and platform',
  },
  already_exists: { status: 409, meaning: 'a record with the same key already exists' },
  referenced_record_missing: { status: 409, meaning: 'the record refers to a record that does not exist' },
  email_taken: { status: 409, meaning: 'a user with this email already exists' },
  vineyard_name_taken: { status: 409, meaning: 'the caller already has a vineyard with this name' },
  vine_name_taken: { status: 409, meaning: 'the caller already has a configuration with this name' },
  project_name_taken: { status: 409, meaning: 'the caller already has a configuration with this project name' },
  module_version_exists: {
    status: 409,
    meaning: 'this module version is already published; a published version never changes (publish a new version)',
  },
  release_exists: { status: 409, meaning: 'this worker release version is already published' },
  signing_key_conflict: {
    status: 409,
    meaning: 'another replica made or rotated the OIDC signing key at the same moment; its key is used',
  },
  device_code_used: { status: 409, meaning: 'this device code already has a login' },
  invalid_transition: { status: 409, meaning: 'the record cannot move from its status to the one asked' },
  job_finished: { status: 409, meaning: 'the job has already finished' },
  job_not_running: { status: 409, meaning: 'the job is not running' },
  job_log_closed: { status: 409, meaning: "the job's log takes no more chunks" },
  log_seq_gap: {
    status: 409,
    meaning:
      "the batch's first `seq` is past the next one the job's log expects (`expected_seq`); send the earlier batches first",
  },
  not_a_plan_job: { status: 409, meaning: 'the job named as plan is not a plan job' },
  plan_already_applied: { status: 409, meaning: 'the plan was already applied' },
  plan_not_ready: { status: 409, meaning: 'the plan has not succeeded (yet)' },
  plan_stale: { status: 409, meaning: 'the configuration changed since the plan was made' },
  plan_speculative: {
    status: 409,
    meaning: "the plan is speculative (a drift check or a pull request's plan), which is never deployed",
  },
  policy_failed: {
    status: 409,
    meaning: 'the plan failed a mandatory policy and is not overridden; see `failed_policies`',
  },
  approval_required: { status: 409, meaning: 'the configuration deploys only a plan that was approved' },
  plan_required: {
    status: 409,
    meaning:
      'the configuration changes only through a plan (mandatory policies or a required approval): plan first, then apply that plan',
  },
  policy_unchecked: {
    status: 409,
    meaning: 'the plan lacks a valid result of a policy its claim carried, so it was never checked: plan again',
  },
  plan_kind_mismatch: {
    status: 409,
    meaning: 'a DEPLOY applies a plan of the configuration, a DESTROY a destroy plan; the plan named is the other kind',
  },
  plan_rejected: { status: 409, meaning: 'the plan was rejected, which ends its path to deploy; plan again' },
  plan_already_decided: { status: 409, meaning: 'the plan was already approved or rejected' },
  run_discarded: { status: 409, meaning: 'the run was discarded: its plan is never applied; start a new run' },
  run_plan_only: { status: 409, meaning: 'the run is a speculative plan (`tofu plan`), which is never applied' },
  run_has_no_changes: { status: 409, meaning: "the run's plan found no changes: there is nothing to apply" },
  run_already_confirmed: { status: 409, meaning: 'the run was already confirmed and waits for its approval' },
  run_not_discardable: { status: 409, meaning: 'only a run whose plan waits for a decision can be discarded' },
  run_not_cancelable: { status: 409, meaning: 'the run has no queued or running plan or apply to cancel' },
  run_configuration_not_uploaded: {
    status: 409,
    meaning: 'the run names a configuration version that is not uploaded (pending or errored)',
  },
  destroy_plan_not_allowed: { status: 409, meaning: "the workspace's `allow-destroy-plan` is off: no destroy runs" },
  plan_already_overridden: { status: 409, meaning: "the plan's failed policies were already overridden" },
  no_failed_policies: { status: 409, meaning: 'the plan failed no mandatory policy: there is nothing to override' },
  trigger_cycle: { status: 409, meaning: 'the run triggers would form a cycle' },
  configuration_not_deployed: { status: 409, meaning: 'a drift check needs a DEPLOYED configuration' },
  configuration_busy: { status: 409, meaning: 'the configuration has a queued or running job' },
  vine_has_resources: {
    status: 409,
    meaning:
      'the configuration still manages resources: destroy it first, or delete it with `force` (organization admins and owners)',
  },
  configuration_connected: {
    status: 409,
    meaning: 'the configuration is connected to a repository: disconnect it first, which removes the webhook',
  },
  vineyard_not_empty: { status: 409, meaning: 'the vineyard still holds configurations: delete or move them first' },
  provider_not_linked: { status: 409, meaning: 'the user has no identity at this git provider' },
  needs_reconnect: {
    status: 409,
    meaning:
      'the person who connected the configuration is no longer an admin of its owner: their token is not used until an admin connects it again',
  },
  configuration_version_not_ready: {
    status: 409,
    meaning: 'the configuration version is not uploaded (still pending, or errored)',
  },
  configuration_version_upload_used: {
    status: 409,
    meaning:
      "the configuration version's upload URL was used already (an upload began, or the version is no longer pending)",
  },
  vcs_permission_missing: {
    status: 409,
    meaning:
      'the git provider token lacks a scope or repository role the call needs (webhooks, statuses, comments); the message says what to grant, or connect with a manual webhook',
  },
  state_locked: { status: 409, meaning: 'the state is locked by another lock ID' },
  state_not_locked: { status: 409, meaning: "the configuration's state is not locked: there is nothing to unlock" },
  state_rejected: {
    status: 409,
    meaning:
      'the engine of a job failed as lost wrote its state after a later job had the configuration: the write is kept as a rejected version for recovery, not made current',
  },
  state_after_lost_not_set: {
    status: 409,
    meaning: "the configuration's state has no version written after a lost job awaiting review",
  },
  org_exists: { status: 409, meaning: 'an organization with this id already exists' },
  org_name_taken: { status: 409, meaning: 'an organization with this name already exists' },
  member_exists: { status: 409, meaning: 'this email already is (or is invited as) a member of the organization' },
  last_owner: { status: 409, meaning: 'the last owner of an organization cannot leave, be removed or be demoted' },
  org_busy: { status: 409, meaning: 'the organization has queued or running jobs; cancel them first' },
  worker_destroyed: { status: 409, meaning: 'the worker was destroyed' },
  vcs_connection_limit: {
    status: 409,
    meaning: 'the owner has as many manual-webhook repository connections as the server allows',
  },
  provider_version_exists: { status: 409, meaning: 'the provider version is already published; versions never change' },
  provider_platform_exists: {
    status: 409,
    meaning: "the provider version's build for this os and arch is already uploaded",
  },
  gpg_key_exists: { status: 409, meaning: 'the namespace already has this GPG key' },
  // ---- 422: well-formed, but its content is refused
  configuration_invalid: {
    status: 422,
    meaning:
      'the configuration tarball is refused: not gzip, not a tar, a path escaping its root, a link out of it, or an entry that is not a file, directory or link',
  },
  mirror_archive_invalid: {
    status: 422,
    meaning:
      'the pushed archive is not a provider zip (no central directory, zip64, encryption, an unknown compression)',
  },
  module_invalid: {
    status: 422,
    meaning:
      'the module tarball is refused: not gzip, not a tar, a path escaping its root, a link out of it, or an entry that is not a file, directory or link',
  },
  state_md5_mismatch: { status: 422, meaning: "the state's MD5 is not the one given with it" },
  variable_category_unsupported: {
    status: 422,
    meaning: 'only terraform (not env or HCL) variables are kept on a workspace',
  },
  policy_invalid: {
    status: 422,
    meaning: "a policy's Rego module does not compile (the engine's message) or declares no `deny` rule",
  },
  provider_shasums_invalid: {
    status: 422,
    meaning: 'the SHA256SUMS file is not `<sha256>  <file>` lines, or lists no zip of the provider version',
  },
  provider_signature_invalid: {
    status: 422,
    meaning: "the signature of SHA256SUMS was not made by any of the namespace's GPG keys (or it has none)",
  },
  provider_platform_not_listed: {
    status: 422,
    meaning: "the zip's file name is not listed in the version's SHA256SUMS",
  },
  provider_shasum_mismatch: { status: 422, meaning: "the zip's sha256 is not the one its SHA256SUMS lists" },
  // ---- 413: over a size limit
  payload_too_large: { status: 413, meaning: 'the request body is over its limit' },
  artifact_too_large: { status: 413, meaning: 'the plan artifact is over its limit' },
  configuration_too_large: { status: 413, meaning: 'the configuration tarball (packed or unpacked) is over its limit' },
  mirror_archive_too_large: {
    status: 413,
    meaning: "the provider archive (packed, unpacked, or its number of files) is over the mirror's limit",
  },
  module_too_large: { status: 413, meaning: 'the module tarball (packed or unpacked) is over its limit' },
  log_chunk_too_large: { status: 413, meaning: 'the log chunk is over its limit' },
  job_log_truncated: { status: 413, meaning: "the job's log reached its total size limit" },
  log_batch_too_large: { status: 413, meaning: 'the log batch has too many chunks or bytes' },
  metadata_too_large: { status: 413, meaning: 'the metadata object is over its limit' },
  state_too_large: { status: 413, meaning: 'the state file is over its limit' },
  webhook_too_large: { status: 413, meaning: 'the webhook delivery is over its limit' },
  policy_too_large: { status: 413, meaning: 'the policy module is over its size limit (64 KiB)' },
  provider_zip_too_large: { status: 413, meaning: 'the provider zip is over the size limit of the registry' },
  // ---- 415
  unsupported_media_type: { status: 415, meaning: 'the body has a content type or encoding the route does not take' },
  // ---- 429: slow down (with Retry-After)
  rate_limited: { status: 429, meaning: 'too many requests; retry after `Retry-After` seconds' },
  too_many_long_polls: { status: 429, meaning: 'too many claim long-polls open at once' },
  too_many_streams: { status: 429, meaning: 'too many live log streams open at once' },
  policy_checks_busy: {
    status: 429,
    meaning: 'the server is checking as many policy modules as it may at once; retry after `Retry-After` seconds',
  },
  // ---- 500, 502 and 503
  internal_error: { status: 500, meaning: 'an unexpected error; the server logged it' },
  not_ready: { status: 503, meaning: 'a dependency of the control plane is not reachable' },
  database_unavailable: { status: 503, meaning: 'the database cannot be reached or is too busy' },
  shutting_down: {
    status: 503,
    meaning: 'this replica is stopping: retry after `Retry-After` (another replica answers)',
  },
  artifact_store_unavailable: { status: 503, meaning: 'the artifact store cannot be reached or refused us' },
  artifact_digest_mismatch: {
    status: 503,
    meaning: 'the artifact store returned bytes whose size or sha256 differ from the recorded ones',
  },
  provider_unavailable: { status: 503, meaning: 'the sign-in or git provider cannot be reached' },
  mirror_upstream_unavailable: {
    status: 502,
    meaning:
      "the provider mirror's upstream registry cannot be reached, or answered an error or something that is not its protocol",
  },
  mirror_upstream_signature_invalid: {
    status: 502,
    meaning: "the upstream registry's SHA256SUMS is not signed by any of the signing keys it names; nothing is stored",
  },
  mirror_upstream_shasum_mismatch: {
    status: 502,
    meaning:
      "the upstream's archive (or its download's shasum) is not the one its signed SHA256SUMS lists; nothing is stored",
  },
  release_api_disabled: { status: 503, meaning: 'the release endpoints are off (no release secret is set)' },
  // ---- 507
  insufficient_storage: {
    status: 507,
    meaning: 'the artifact store is full: nothing was stored (nothing stored before is lost); free space, then retry',
  },
} as const satisfies Record<string, ProblemCodeInfo>;

export type ProblemCode = keyof typeof PROBLEM_CODES;

/**
 * Codes published with a second status before this registry existed. They keep it so no client
 * breaks; the list only shrinks, and a test refuses any other code thrown with two statuses.
 */
export const LEGACY_SECOND_STATUS: Readonly<Partial<Record<ProblemCode, { status: number; meaning: string }>>> = {
  invalid_grant: { status: 401, meaning: 'the refresh token is not valid, or was reused (its family is revoked)' },
  provider_not_configured: { status: 503, meaning: 'the git provider is not configured on this server' },
  unsupported_media_type: { status: 400, meaning: 'the plan upload is neither octet-stream nor multipart' },
};

export function isProblemCode(code: string): code is ProblemCode {
  return Object.hasOwn(PROBLEM_CODES, code);
}

/** The status a registered code is sent with, or undefined for an unregistered one. */
export function problemStatusOf(code: string): number | undefined {
  return isProblemCode(code) ? PROBLEM_CODES[code].status : undefined;
}
