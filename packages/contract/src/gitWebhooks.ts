/** Git-driven runs (issue 13): what the webhook endpoints answer a git provider. */
import { z } from 'zod';
import { uuid } from './common.js';

export const WebhookAccepted = z
  .object({
    accepted: z.literal(true),
    jobs: z
      .array(uuid)
      .describe(
        'the jobs this delivery queued: empty for a ping, an ignored event, a redelivery, a push that touches none of the paths, or a repository no configuration is connected to',
      ),
    module_tag: z
      .object({
        tag: z.string(),
        commit_sha: z.string(),
        outcome: z.enum(['published', 'ignored', 'failed']),
        version: z.string().nullable(),
        message: z.string().nullable(),
        at: z.string(),
      })
      .nullable()
      .optional()
      .describe(
        "a module repository's delivery (`?module=`): what its tag push did (null for another event or a redelivery)",
      ),
  })
  .describe('the delivery was received');
