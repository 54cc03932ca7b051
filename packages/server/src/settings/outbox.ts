import { integer } from './Setting.js';

/**
 * The outbox (issue 24): notification deliveries and git provider feedback, one table and one
 * delivery task; the settings of notifications themselves (receivers, timeouts) are in `work.ts`.
 */
export const OUTBOX_SETTINGS = {
  outbox: {
    intervalSeconds: integer({
      env: 'TRELLIS_OUTBOX_INTERVAL_S',
      default: 5,
      min: 1,
      max: 3600,
      deprecatedEnv: ['TRELLIS_NOTIFICATIONS_INTERVAL_S', 'TRELLIS_VCS_FEEDBACK_INTERVAL_S'],
      description:
        'how often the delivery task takes due rows from the outbox: notification deliveries ([notifications.md](notifications.md)) and commit statuses and pull request comments ([git.md](git.md#reading-the-feedback-on-a-pull-request)); on every replica, `FOR UPDATE SKIP LOCKED` keeps each row to one',
    }),
    batchSize: integer({
      env: 'TRELLIS_OUTBOX_BATCH_SIZE',
      default: 20,
      min: 1,
      max: 1000,
      description: 'rows one round of the delivery task takes at most (the rest wait for the next round)',
    }),
    leaseSeconds: integer({
      env: 'TRELLIS_OUTBOX_LEASE_S',
      default: 120,
      min: 10,
      max: 3600,
      description:
        'a row taken by a replica is invisible to the others this long while it is sent; a replica that stops mid-send leaves it to be retried after it',
    }),
    retryBaseSeconds: integer({
      env: 'TRELLIS_OUTBOX_RETRY_BASE_S',
      default: 10,
      min: 1,
      max: 3600,
      deprecatedEnv: ['TRELLIS_NOTIFICATIONS_RETRY_BASE_S'],
      description:
        'the first retry of a failed delivery or feedback waits about this long, each next one twice as long (with jitter)',
    }),
    retryMaxSeconds: integer({
      env: 'TRELLIS_OUTBOX_RETRY_MAX_S',
      default: 3600,
      min: 1,
      max: 86_400,
      description: 'a wait between two tries is never longer than this',
    }),
    retryWindowSeconds: integer({
      env: 'TRELLIS_OUTBOX_RETRY_WINDOW_S',
      default: 86_400,
      min: 60,
      max: 30 * 86_400,
      description: 'a row still failing this long after it was written is given up (`failed`)',
    }),
    vcsFeedbackMaxAttempts: integer({
      env: 'TRELLIS_OUTBOX_VCS_FEEDBACK_MAX_ATTEMPTS',
      default: 10,
      min: 1,
      max: 1000,
      description:
        'tries of one commit status or pull request comment, at most, before it is given up (notification deliveries are tried until the retry window ends)',
    }),
  },
};
