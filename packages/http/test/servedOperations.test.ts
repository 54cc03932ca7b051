import { operations } from '@trellis/contract';
import { createUseCases } from '@trellis/core';
import { apiRoutes, createApi, silentLogger } from '@trellis/http';
import { createTestCore } from '@trellis/testkit';
import { describe, expect, it } from 'vitest';

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
}

/** Every route express serves, as `METHOD path`, sub-routers included. */
function servedRoutes(stack: Layer[]): string[] {
  return stack.flatMap((layer) => {
    if (layer.route) {
      const { path, methods } = layer.route;
      return Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`);
    }
    return layer.handle?.stack ? servedRoutes(layer.handle.stack) : [];
  });
}

/** The express form of a contract path: `{param}` → `:param`. */
const expressForm = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

/**
 * Served outside the contract on purpose: health and metrics for the platform, the contract's own
 * document, and the web's sign-in and sign-out links (a browser follows them; they answer
 * redirects and pages, not the API's JSON). Terraform Cloud's protocol and the registry protocols
 * are HashiCorp's contracts, mounted by their own modules (not in this app).
 */
const OUTSIDE_THE_CONTRACT = [
  'GET /healthz',
  'GET /readyz',
  'GET /api/openapi.json',
  'GET /auth/bootstrap',
  'GET /auth/link',
  'POST /auth/signout',
];

describe('the contract and the served API (issue 29)', () => {
  const core = createTestCore({ now: new Date() });
  const useCases = createUseCases(core.deps);

  it('serves each operation of the contract once, with the contract’s own description', () => {
    const routes = apiRoutes({ useCases, events: core.events, logger: silentLogger });
    const served = new Map(routes.map((route) => [route.operationId, route]));
    expect(routes.map((route) => route.operationId)).toHaveLength(served.size);
    expect([...served.keys()].sort()).toEqual(Object.keys(operations).sort());
    for (const [id, operation] of Object.entries(operations)) {
      const { handler: _handler, ...described } = served.get(id)!;
      expect(described, id).toEqual(operation);
    }
  });

  it('serves no route of the API that the contract does not hold', () => {
    const app = createApi({
      useCases,
      events: core.events,
      clock: core.clock,
      logger: silentLogger,
      readiness: async () => {},
      webOrigin: 'http://localhost:5173',
      sessionSecret: 'session-secret-for-tests-xxxxxxxxxxxxxxx',
      releaseApiSecret: 'release-secret',
      bootstrap: { token: 'bootstrap-token-for-tests-0123456789', email: 'admin@localhost', oneTime: false },
      session: { idleSeconds: 3600, absoluteSeconds: 7200 },
      version: '0.0.0-test',
    }) as unknown as { router: { stack: Layer[] } };
    const served = servedRoutes(app.router.stack);
    const contract = Object.values(operations).map((op) => `${op.method.toUpperCase()} ${expressForm(op.path)}`);
    expect(served.filter((route) => !OUTSIDE_THE_CONTRACT.includes(route)).sort()).toEqual([...contract].sort());
  });
});
