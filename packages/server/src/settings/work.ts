import { boolean, integer, optionalText } from './Setting.js';

/** Agents and jobs: liveness, caps and retention, and the intervals of the background tasks. */
export const WORK_SETTINGS = {
  heartbeatTimeoutSeconds: integer({
    env: 'TRELLIS_HEARTBEAT_TIMEOUT_S',
    default: 60,
    min: 5,
    max: 86_400,
    description: 'an agent silent this long is `OFFLINE`',
  }),
  lostJobTimeoutSeconds: integer({
    env: 'TRELLIS_LOST_JOB_TIMEOUT_S',
    default: 120,
    min: 5,
    max: 86_400,
    description: '`PROCESSING` jobs of an agent silent this long become `FAILED`',
  }),
  heartbeatFlushSeconds: integer({
    env: 'TRELLIS_HEARTBEAT_FLUSH_S',
    default: 1,
    min: 0,
    max: 10,
    description:
      "agents' steady heartbeats are written together this often (one `UPDATE` for all of them) and at shutdown (`0`: each with its request); a heartbeat after a silence of the heartbeat timeout (or lost-job timeout, if shorter) minus twice this is written with its request, so the `OFFLINE` status and the lost-agent sweep are never decided on a queued heartbeat",
  }),
  sweepIntervalSeconds: integer({
    env: 'TRELLIS_SWEEP_INTERVAL_S',
    default: 15,
    min: 1,
    max: 3600,
    description: 'how often the lost-agent sweep runs (a global task: one replica runs it)',
  }),
  maxStateBytes: integer({
    env: 'TRELLIS_MAX_STATE_BYTES',
    default: 64 * 1024 * 1024,
    min: 1024,
    max: 1024 * 1024 * 1024,
    shownDefault: '`67108864` (64 MiB)',
    description:
      'the largest state file an agent may write (`413 state_too_large`; a declared `Content-Length` over it is refused before the body is read)',
  }),
  stateVersionsKept: integer({
    env: 'TRELLIS_STATE_VERSIONS_KEPT',
    default: 100,
    min: 1,
    max: 1_000_000,
    description:
      "versions of each vine's state kept; older versions and their bytes are deleted as new ones are written",
  }),
  maxExecutionMetadataBytes: integer({
    env: 'TRELLIS_MAX_EXECUTION_METADATA_BYTES',
    default: 1024 * 1024,
    min: 1024,
    max: 64 * 1024 * 1024,
    shownDefault: '`1048576` (1 MiB)',
    description:
      "a job's `execution_metadata` as merged across its status updates, serialised as JSON (`413 metadata_too_large`); each update is also capped at 256 KiB",
  }),
  maxLogBytesPerJob: integer({
    env: 'TRELLIS_MAX_LOG_BYTES_PER_JOB',
    default: 64 * 1024 * 1024,
    min: 1024,
    max: 16 * 1024 * 1024 * 1024,
    shownDefault: '`67108864` (64 MiB)',
    description:
      'bytes of log a job keeps; the chunk that would pass it is replaced by one `SYSTEM` line saying the log was cut, and later chunks get `413 job_log_truncated`',
  }),
  logGraceMinutes: integer({
    env: 'TRELLIS_LOG_GRACE_MINUTES',
    default: 5,
    min: 0,
    max: 1440,
    description:
      'how long a cancelled job still takes log chunks while its engine winds down; later ones get `409 job_log_closed`',
  }),
  logRetentionDays: integer({
    env: 'TRELLIS_LOG_RETENTION_DAYS',
    default: 90,
    min: 0,
    max: 36_500,
    description: 'logs of jobs finished longer ago are deleted (the jobs stay); `0` keeps logs forever',
  }),
  auditRetentionDays: integer({
    env: 'TRELLIS_AUDIT_RETENTION_DAYS',
    default: 365,
    min: 0,
    max: 36_500,
    description: 'audit entries ([audit.md](audit.md)) older than this are deleted; `0` keeps them forever',
  }),
  deletedVineRetentionDays: integer({
    env: 'TRELLIS_DELETED_VINE_RETENTION_DAYS',
    default: 30,
    min: 0,
    max: 36_500,
    description:
      'the state versions of a deleted configuration are kept this long, then purged (its jobs stay); `0` keeps them forever',
  }),
  retentionIntervalSeconds: integer({
    env: 'TRELLIS_RETENTION_INTERVAL_S',
    default: 3600,
    min: 1,
    max: 86_400,
    description:
      'how often the log, audit and deleted-configuration retention tasks run (global tasks; each pass deletes in batches of 5,000 chunks, at most 500,000)',
  }),
  driftSchedulerIntervalSeconds: integer({
    env: 'TRELLIS_DRIFT_SCHEDULER_INTERVAL_S',
    default: 60,
    min: 1,
    max: 3600,
    description:
      'how often the drift checks that are due are queued (see [drift.md](drift.md)); a global task, and replicas never queue the same check twice',
  }),
  notificationTimeoutSeconds: integer({
    env: 'TRELLIS_NOTIFICATIONS_TIMEOUT_S',
    default: 10,
    min: 1,
    max: 120,
    description: 'how long one delivery request may take before it counts as a timeout (retried)',
  }),
  notificationTestsPerMinute: integer({
    env: 'TRELLIS_NOTIFICATIONS_TESTS_PER_MINUTE',
    default: 10,
    min: 1,
    max: 10_000,
    description:
      'test deliveries (`POST /api/notifications/{id}/test`) an owner (a user or an organization, whichever member asks) may send a minute; past it `429 rate_limited` with `Retry-After` ([notifications.md](notifications.md))',
  }),
  notificationsAllowPrivateUrls: boolean({
    env: 'TRELLIS_NOTIFICATIONS_ALLOW_PRIVATE_URLS',
    default: false,
    description:
      '`true` lets notifications reach private, loopback and link-local addresses, and `http://` URLs: for tests and on-premises receivers only',
  }),
  maxManualVcsConnections: integer({
    env: 'TRELLIS_MAX_MANUAL_VCS_CONNECTIONS',
    default: 50,
    min: 0,
    max: 1_000_000,
    description:
      "an owner's repository connections with a manual webhook, at most (`409 vcs_connection_limit`; connecting the same vine again does not count twice; automatic webhooks are not counted) ([git.md](git.md#manual-webhooks))",
  }),
  opaBin: optionalText({
    env: 'TRELLIS_OPA_BIN',
    accepts: 'a path, or a name looked up on `PATH`',
    shownDefault: '`opa` on `PATH`',
    description:
      'the Open Policy Agent binary that compiles policy modules when they are saved ([policies.md](policies.md)); without one the server logs a warning at start, accepts any module with a `deny` rule, and the agents report compile errors',
  }),
  policyCheckConcurrency: integer({
    env: 'TRELLIS_POLICY_CHECKS_CONCURRENCY',
    default: 2,
    min: 1,
    max: 64,
    description:
      'policy modules compiled at once when they are saved (each check runs `opa` twice) ([policies.md](policies.md#checked-when-saved))',
  }),
  policyCheckQueue: integer({
    env: 'TRELLIS_POLICY_CHECKS_QUEUE',
    default: 8,
    min: 0,
    max: 1000,
    description:
      'policy checks that may wait for a turn beyond those running; one more is refused at once with `429 policy_checks_busy` and `Retry-After`',
  }),
};
