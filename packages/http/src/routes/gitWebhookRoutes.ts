import {
  GIT_PROVIDERS,
  type GitProvider,
  PROVIDER_NAMES,
  type UseCases,
  type WebhookRequestParts,
} from '@trellis/core';
import { WebhookAccepted } from '@trellis/contract';
import type { Request } from 'express';
import { z } from 'zod';
import { defineRoute, type RouteSpec } from '../routing/route.js';

/** Provider payloads of large pushes run to a few MiB (GitHub caps deliveries at 25 MB). */
const WEBHOOK_BODY_LIMIT = 25 * 1024 * 1024;

const HEADERS: Record<GitProvider, string> = {
  github:
    '`X-GitHub-Event`, `X-GitHub-Delivery`, and `X-Hub-Signature-256: sha256=<HMAC-SHA256 of the raw body with the secret>`',
  gitlab: '`X-Gitlab-Event`, `X-Gitlab-Event-UUID`, and `X-Gitlab-Token` equal to the secret',
  bitbucket:
    '`X-Event-Key`, `X-Request-UUID`, and `X-Hub-Signature: sha256=<HMAC-SHA256 of the raw body with the secret>`',
};

function parts(req: Request): WebhookRequestParts {
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return { headers, rawBody: Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0) };
}

const WebhookQuery = z.object({
  vine: z
    .string()
    .optional()
    .describe(
      'the connected vine, in the hook URL Trellis gives: it makes each hook URL unique; deliveries are matched by repository and secret',
    ),
});

/** `POST /api/webhooks/{github,gitlab,bitbucket}`: deliveries of the git providers (issue 13). */
export function gitWebhookRoutes(useCases: UseCases): RouteSpec[] {
  return GIT_PROVIDERS.map((provider) =>
    defineRoute({
      method: 'post',
      path: `/api/webhooks/${provider}`,
      operationId: `receive${PROVIDER_NAMES[provider].replace(/\W/g, '')}Webhook`,
      summary: `Receive a ${PROVIDER_NAMES[provider]} webhook delivery (push, pull request, ping)`,
      description:
        `Unauthenticated but verified: ${HEADERS[provider]}. The delivery acts only for the connections of its ` +
        'repository whose secret verifies it: a push to the connected branch touching its `paths` queues a PLAN ' +
        'of that commit; a pull request into it queues a speculative PLAN of its head commit. `202` for a ping, ' +
        'an ignored event, a redelivery (same delivery id) or a repository no configuration is connected to; ' +
        '`401 webhook_signature_invalid` (nothing created) when the signature is missing or wrong.',
      tags: ['webhooks'],
      auth: 'none',
      query: WebhookQuery,
      body: 'raw',
      bodyLimit: WEBHOOK_BODY_LIMIT,
      rateLimit: { windowSeconds: 60, limit: 600 },
      responses: {
        202: { description: 'Received', schema: WebhookAccepted },
        401: { description: '`webhook_signature_invalid`: the signature is missing or wrong; nothing was created' },
      },
      handler: async ({ req }) => {
        const outcome = await useCases.gitEvents.receive(provider, parts(req));
        return { status: 202, body: { accepted: true, jobs: outcome.jobs.map((job) => job.id) } };
      },
    }),
  );
}
