/** The git providers' webhook deliveries (issues 13, 23, 28): one operation per provider. */
import { type GIT_PROVIDERS, type GitProvider, MAX_WEBHOOK_BODY_BYTES, PROVIDER_NAMES } from '@trellis/core';
import { z } from 'zod';
import { operation } from '../operation.js';
import { WebhookAccepted } from '../schemas.js';

const HEADERS: Record<GitProvider, string> = {
  github:
    '`X-GitHub-Event`, `X-GitHub-Delivery`, and `X-Hub-Signature-256: sha256=<HMAC-SHA256 of the raw body with the secret>`',
  gitlab: '`X-Gitlab-Event`, `X-Gitlab-Event-UUID`, and `X-Gitlab-Token` equal to the secret',
  bitbucket:
    '`X-Event-Key`, `X-Request-UUID`, and `X-Hub-Signature: sha256=<HMAC-SHA256 of the raw body with the secret>`',
};

const WebhookQuery = z.object({
  vine: z
    .string()
    .optional()
    .describe(
      'the connected configuration, as in the `webhook_url` Trellis gives: the delivery is checked against the secret of its connection only',
    ),
  module: z
    .string()
    .optional()
    .describe(
      "a registry module's repository (issue 28), as in its `webhook_url`: a push of a version tag publishes that version",
    ),
});

/** `POST /api/webhooks/{provider}`: a delivery of one git provider. */
function webhookOperation(provider: GitProvider) {
  return operation({
    method: 'post',
    path: `/api/webhooks/${provider}`,
    operationId: `receive${PROVIDER_NAMES[provider].replace(/\W/g, '')}Webhook`,
    summary: `Receive a ${PROVIDER_NAMES[provider]} webhook delivery (push, pull request, ping)`,
    description:
      `Unauthenticated but verified: ${HEADERS[provider]}. The hook URL names the connection (\`?vine=\`); the ` +
      "delivery is checked against that connection's secret only, as its body streams in (at most " +
      `${MAX_WEBHOOK_BODY_BYTES / (1024 * 1024)} MiB), and acts only for that connection: a push to the connected branch ` +
      'touching its `paths` queues a PLAN of that commit; a pull request into it queues a speculative PLAN of ' +
      "its head commit (a fork's only as the connection's `fork_pull_requests` allows). `202` for a ping, an " +
      'ignored event, a redelivery or replay (same delivery id, or same body) or a configuration with no ' +
      'connection; `401 webhook_signature_invalid` (nothing created) when the signature is missing or wrong. ' +
      "With `?module=` instead (a registry module's repository), a push of a tag `v1.2.0` publishes version `1.2.0` " +
      'of the module from the tagged commit (`module_tag` says what became of it).',
    tags: ['webhooks'],
    auth: 'none',
    query: WebhookQuery,
    body: 'raw',
    rateLimit: { windowSeconds: 60, limit: 600 },
    responses: {
      202: { description: 'Received', schema: WebhookAccepted },
      400: {
        description: '`validation_failed`: the URL names no connection (`vine` or `module`), or no event header',
      },
      401: { description: '`webhook_signature_invalid`: the signature is missing or wrong; nothing was created' },
      413: { description: '`webhook_too_large`: the body is over the limit, refused before or while it streams' },
    },
  });
}

export const receiveGitHubWebhook = webhookOperation('github');
export const receiveGitLabWebhook = webhookOperation('gitlab');
export const receiveBitbucketWebhook = webhookOperation('bitbucket');

/** The operation receiving each provider's deliveries. */
export const WEBHOOK_OPERATIONS = {
  github: receiveGitHubWebhook,
  gitlab: receiveGitLabWebhook,
  bitbucket: receiveBitbucketWebhook,
} as const satisfies Record<(typeof GIT_PROVIDERS)[number], ReturnType<typeof webhookOperation>>;

/** In the order the API reference lists them. */
export const gitWebhooksOperations = { receiveGitHubWebhook, receiveGitLabWebhook, receiveBitbucketWebhook };
