import { GIT_PROVIDERS, type UseCases, type WebhookRequestParts } from '@trellis/core';
import type { Request } from 'express';
import { implement, type RouteSpec } from '../routing/route.js';
import { WEBHOOK_OPERATIONS } from '@trellis/contract';

function headersOf(req: Request): WebhookRequestParts['headers'] {
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

/** `POST /api/webhooks/{github,gitlab,bitbucket}?vine=`: deliveries of the git providers (issues 13, 23). */
export function gitWebhookRoutes(useCases: UseCases): RouteSpec[] {
  return GIT_PROVIDERS.map((provider) =>
    implement(WEBHOOK_OPERATIONS[provider], async ({ req, query }) => {
      const declared = Number(req.headers['content-length']);
      if (query.module !== undefined) {
        const delivered = await useCases.moduleTags.receive(provider, {
          module: query.module,
          headers: headersOf(req),
          body: req,
          declaredBytes: Number.isFinite(declared) ? declared : null,
        });
        return { status: 202, body: { accepted: true, jobs: [], module_tag: delivered.result } };
      }
      const outcome = await useCases.gitEvents.receive(provider, {
        vine: query.vine,
        headers: headersOf(req),
        body: req,
        declaredBytes: Number.isFinite(declared) ? declared : null,
      });
      return { status: 202, body: { accepted: true, jobs: outcome.jobs.map((job) => job.id) } };
    }),
  );
}
