import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createUseCases, type ProviderPorts, type UseCases } from '@trellis/core';
import { createApi, JwtTokenSigner, LiveLogStreams, silentLogger } from '@trellis/http';
import { bootstrapSessionCookie, createTestCore, deviceLoginTokens, type TestCore } from '@trellis/testkit';

export const JWT_SECRET = 'an-http-test-secret-of-at-least-32-bytes!';
export const WEB_ORIGIN = 'http://localhost:5173';
export const BOOTSTRAP_TOKEN = 'bootstrap-token-for-tests-0123456789';

export interface ApiHarness {
  url: string;
  core: TestCore;
  useCases: UseCases;
  signer: JwtTokenSigner;
  /** The live-log streams of the API (their counters). */
  logStreams: LiveLogStreams;
  close(): Promise<void>;
}

/** The real express API on loopback, over the in-memory core with the real JWT signer. */
export async function startApi(
  options: {
    releaseApiSecret?: string | null;
    webOrigin?: string;
    oneTimeBootstrap?: boolean;
    providers?: ProviderPorts;
    /** Aborted when the server stops (the composition root's shutdown signal). */
    shutdownSignal?: AbortSignal;
  } = {},
): Promise<ApiHarness> {
  const core = createTestCore({ now: new Date(), ...(options.providers ? { providers: options.providers } : {}) });
  const signer = new JwtTokenSigner(JWT_SECRET, core.clock);
  const useCases = createUseCases({ ...core.deps, signer });
  const logStreams = new LiveLogStreams(useCases, core.events);
  const app = createApi({
    useCases,
    events: core.events,
    clock: core.clock,
    logger: silentLogger,
    readiness: () => core.uow.check(),
    webOrigin: options.webOrigin ?? WEB_ORIGIN,
    sessionSecret: 'session-secret-for-tests-xxxxxxxxxxxxxxx',
    releaseApiSecret: options.releaseApiSecret === undefined ? 'release-secret' : options.releaseApiSecret,
    bootstrap: { token: BOOTSTRAP_TOKEN, email: 'admin@localhost', oneTime: options.oneTimeBootstrap ?? false },
    session: { idleSeconds: 3600, absoluteSeconds: 4 * 3600 },
    version: '0.0.0-test',
    logStreams,
    ...(options.shutdownSignal ? { shutdownSignal: options.shutdownSignal } : {}),
  });
  const server: Server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    core,
    useCases,
    signer,
    logStreams,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Signs in through the bootstrap link and returns the session cookie (`name=value`). */
export async function signIn(api: ApiHarness): Promise<string> {
  return bootstrapSessionCookie(api.url, BOOTSTRAP_TOKEN);
}

/** A CLI access token for the bootstrap user, through the real device login. */
export async function cliTokens(api: ApiHarness): Promise<{ access_token: string; refresh_token: string }> {
  return deviceLoginTokens(api.url, await signIn(api), WEB_ORIGIN);
}

export function json(body: unknown, headers: Record<string, string> = {}): RequestInit {
  return { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
}
