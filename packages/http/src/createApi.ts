import { createHmac, randomUUID } from 'node:crypto';
import type { Clock, EventBus, UseCases, UserActor } from '@trellis/core';
import express, { type Express, type Request, type RequestHandler, type Response } from 'express';
import { secretsEqual } from './auth/authenticate.js';
import { SessionCookies } from './auth/SessionCookies.js';
import { SignInCookies } from './auth/SignInCookies.js';
import { problem, problemErrorHandler, sendProblem } from './errors/problem.js';
import type { Logger } from './logger.js';
import { agentRoutes } from './routes/agentRoutes.js';
import { authRoutes } from './routes/authRoutes.js';
import { cliRoutes } from './routes/cliRoutes.js';
import { releaseRoutes } from './routes/releaseRoutes.js';
import { repositoryRoutes } from './routes/repositoryRoutes.js';
import { type SignInRouteDeps, signInRoutes } from './routes/signInRoutes.js';
import { stateRoutes } from './routes/stateRoutes.js';
import { streamRoutes } from './routes/streamRoutes.js';
import { mountRoutes } from './routing/mountRoutes.js';
import { buildOpenApiDocument } from './routing/openapi.js';
import type { RouteSpec } from './routing/route.js';

/** What the web interface gets of the API's session handling, so both agree on who is signed in. */
export interface WebSessionAccess {
  /** The signed-in user, the session cookie slid forward (SPEC §5.2); null when signed out. */
  currentUser(req: Request, res: Response): UserActor | null;
  /** Whether an `Origin` header is the web interface's own (DESIGN §4 CSRF rule). */
  isWebOrigin(origin: string | undefined): boolean;
}

export interface ApiOptions {
  useCases: UseCases;
  events: EventBus;
  clock: Clock;
  logger: Logger;
  /** Throws when a dependency (database, artifact store) is not reachable. */
  readiness: () => Promise<void>;
  /** Public origin of the web interface, e.g. `https://trellis.example.com`. */
  webOrigin: string;
  /**
   * Every origin the web interface may be served from (default: `webOrigin` only). Read per
   * request, so a server that learns its port after listening can add it.
   */
  allowedOrigins?: () => readonly string[];
  /** Secret that signs web session cookies. */
  sessionSecret: string;
  releaseApiSecret: string | null;
  /**
   * Web sign-in with the providers of `useCases.signIn`. `callbackUrl` is the redirect URI
   * registered with them (default `<webOrigin>/api/auth/callback`); read per request, so a server
   * that learns its port after listening can follow it.
   */
  signIn?: { callbackUrl?: () => string };
  /** Enables `GET /auth/bootstrap?token=…` (DESIGN §5) when set. */
  bootstrap: { token: string; email: string; oneTime: boolean } | null;
  /** Idle and absolute lifetimes of a web session, in seconds. */
  session?: { idleSeconds: number; absoluteSeconds: number };
  version: string;
  /** Aborted when the server shuts down: long polls and event streams end at once. */
  shutdownSignal?: AbortSignal;
  /**
   * The web interface (pages outside `/api` and `/auth`), mounted after the API routes and given
   * the API's own session handling.
   */
  web?: (session: WebSessionAccess) => RequestHandler;
}

/** Every API route, in the order they are matched. */
export function apiRoutes(
  options: Pick<ApiOptions, 'useCases' | 'events' | 'shutdownSignal'>,
  signIn: Omit<SignInRouteDeps, 'useCases'>,
): RouteSpec[] {
  const shutdown = options.shutdownSignal ?? new AbortController().signal;
  return [
    ...authRoutes(options.useCases),
    ...signInRoutes({ ...signIn, useCases: options.useCases }),
    ...repositoryRoutes(options.useCases),
    ...agentRoutes(options.useCases, options.events, shutdown),
    ...streamRoutes(options.useCases, options.events, shutdown),
    ...cliRoutes(options.useCases),
    ...releaseRoutes(options.useCases),
    ...stateRoutes(options.useCases),
  ];
}

const requestId: RequestHandler = (req, res, next) => {
  const given = req.headers['x-request-id'];
  res.setHeader('X-Request-Id', typeof given === 'string' && /^[\w.-]{1,128}$/.test(given) ? given : randomUUID());
  next();
};

/**
 * The control plane's HTTP surface as an express application that can be served alone or
 * mounted under a prefix of another app.
 */
export function createApi(options: ApiOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', 'loopback');
  const secure = options.webOrigin.startsWith('https://');
  const sessions = new SessionCookies({
    secret: options.sessionSecret,
    secure,
    idleSeconds: options.session?.idleSeconds ?? 12 * 60 * 60,
    absoluteSeconds: options.session?.absoluteSeconds ?? 7 * 24 * 60 * 60,
    clock: options.clock,
  });
  // The sign-in cookie gets its own key, derived so one secret configures both.
  const signIns = new SignInCookies({
    secret: createHmac('sha256', options.sessionSecret).update('trellis sign-in').digest('base64url'),
    secure,
    clock: options.clock,
  });
  const callbackUrl = options.signIn?.callbackUrl ?? (() => `${options.webOrigin}/api/auth/callback`);
  const routes = apiRoutes(options, { sessions, signIns, callbackUrl, logger: options.logger });
  const allowedOrigins = options.allowedOrigins ?? (() => [options.webOrigin]);
  const isWebOrigin = (origin: string | undefined) => origin !== undefined && allowedOrigins().includes(origin);
  const openApi = buildOpenApiDocument(routes, { title: 'Trellis API', version: options.version });

  app.use(requestId);
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    try {
      await options.readiness();
      res.json({ status: 'ready' });
    } catch (error) {
      options.logger.warn({ err: error }, 'not ready');
      sendProblem(res, problem(503, 'not_ready', 'a dependency of the control plane is not reachable'));
    }
  });
  app.get('/api/openapi.json', (_req, res) => {
    res.json(openApi);
  });

  let bootstrapUsed = false;
  app.get('/auth/bootstrap', async (req, res) => {
    const token = typeof req.query.token === 'string' ? req.query.token : '';
    const bootstrap = options.bootstrap;
    const next = typeof req.query.next === 'string' && /^\/(?!\/)[^\\]*$/.test(req.query.next) ? req.query.next : '/';
    if (!bootstrap || bootstrapUsed || !token || !secretsEqual(token, bootstrap.token)) {
      // A person who pasted a wrong token on the sign-in page gets that page back, saying so.
      if (options.web && req.accepts(['json', 'html']) === 'html') {
        const query = new URLSearchParams({ error: 'invalid_bootstrap_token', ...(next === '/' ? {} : { next }) });
        res.redirect(303, `${req.baseUrl}/signin?${query}`);
        return;
      }
      sendProblem(res, problem(401, 'invalid_bootstrap_token', 'this sign-in link is not valid (or was already used)'));
      return;
    }
    if (bootstrap.oneTime) bootstrapUsed = true;
    const user = await options.useCases.auth.ensureUser({ email: bootstrap.email, name: 'Administrator' });
    sessions.start(res, user);
    // Relative to where the control plane is mounted (an embedding app may use a prefix).
    res.redirect(303, `${req.baseUrl}${next}`);
  });
  app.post('/auth/signout', (req, res) => {
    if (!isWebOrigin(req.headers.origin)) {
      sendProblem(res, problem(403, 'csrf_rejected', 'cross-site request refused'));
      return;
    }
    sessions.clear(res);
    res.status(204).end();
  });

  const api = express.Router();
  mountRoutes(api, routes, {
    useCases: options.useCases,
    sessions,
    isWebOrigin,
    releaseApiSecret: options.releaseApiSecret,
  });
  app.use(api);
  if (options.web) {
    app.use(
      options.web({
        currentUser: (req, res) => {
          const session = sessions.read(req);
          if (!session) return null;
          sessions.refresh(res, session);
          return { userId: session.userId, email: session.email, provider: session.provider };
        },
        isWebOrigin,
      }),
    );
  }
  app.use('/api', (req, res) => {
    sendProblem(res, problem(404, 'route_not_found', `no route for ${req.method} ${req.baseUrl}${req.path}`));
  });
  app.use(problemErrorHandler(options.logger));
  return app;
}
