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
  })
  .describe('the delivery was received');
