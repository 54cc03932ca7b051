import { createHmac, randomUUID } from 'node:crypto';
import {
  type BootstrapLink,
  BootstrapSignIn,
  type Clock,
  type EventBus,
  MemoryRateLimitStore,
  type RateLimitStore,
  type UseCases,
  type UserActor,
} from '@trellis/core';
import express, { type Express, type Request, type RequestHandler, type Response } from 'express';
import { SessionCookies } from './auth/SessionCookies.js';
import { SignInCookies } from './auth/SignInCookies.js';
import { linkSignIn } from './auth/linkSignIn.js';
import { problem, problemErrorHandler, sendProblem, UNAVAILABLE_RETRY_AFTER_SECONDS } from './errors/problem.js';
import { refuseWhileStopping } from './errors/stopping.js';
import { ClaimLongPolls, type LongPollLimits } from './limits/ClaimLongPolls.js';
import { type FailureLimit, FailureLimiter } from './limits/FailureLimiter.js';
import type { Logger } from './logger.js';
import { LiveLogStreams } from './realtime/LiveLogStreams.js';
import { agentRoutes } from './routes/agentRoutes.js';
import { FEATURE_ROUTES, type FeatureRoutes } from './featureRoutes.js';
import { authRoutes } from './routes/authRoutes.js';
import { queueRoutes } from './queue/queueRoutes.js';
import { cliRoutes } from './routes/cliRoutes.js';
import { vineEditRoutes } from './routes/vineEditRoutes.js';
import { releaseRoutes } from './routes/releaseRoutes.js';
import { type SignInRouteDeps, signInRoutes } from './routes/signInRoutes.js';
import { stateRoutes } from './routes/stateRoutes.js';
import { streamRoutes } from './routes/streamRoutes.js';
import { type TfeProtocolOptions, tfeProtocol } from './tfe/tfeProtocol.js';
import { stateHistoryRoutes } from './tfe/stateHistoryRoutes.js';
import type { ApiMetrics } from './observability/ApiMetrics.js';
import type { JobFlowMetrics } from './observability/JobFlowMetrics.js';
import { metricsEndpoint } from './observability/metricsEndpoint.js';
import { traceRequests, tracedUseCases } from './observability/tracing.js';
import { mountRoutes } from './routing/mountRoutes.js';
import { buildOpenApiDocument } from './routing/openapi.js';
import { requestContext } from './routing/requestContext.js';
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
  bootstrap: BootstrapLink | null;
  /** Idle and absolute lifetimes of a web session, in seconds. */
  session?: { idleSeconds: number; absoluteSeconds: number };
  version: string;
  /** Aborted when the server shuts down: long polls and event streams end at once. */
  shutdownSignal?: AbortSignal;
  /**
   * The live-log streams of this process (their limits and counters); by default one with the
   * default limits over `useCases` and `events`.
   */
  logStreams?: LiveLogStreams;
  /**
   * The web interface (pages outside `/api` and `/auth`), mounted after the API routes and given
   * the API's own session handling.
   */
  web?: (session: WebSessionAccess) => RequestHandler;
  /** Whose forwarding headers to believe (default `false`: none; docs/security.md "Limits"). */
  trustProxy?: TrustProxy;
  /**
   * Counters of the rate and failure limits. Default: this process's memory; replicas pass a
   * store they share (the database) so a limit holds for the deployment.
   */
  rateLimits?: RateLimitStore;
  limits?: Partial<ApiLimits>;
  /** This control plane's metrics (docs/observability.md); absent: none are kept. */
  metrics?: ApiMetrics;
  /**
   * Serve `GET /metrics` on this app, behind the bearer `token` when not null. Absent: not served
   * here (metrics off, or on their own port).
   */
  metricsEndpoint?: { token: string | null };
  /** The Terraform Cloud protocol of the stock CLI (docs/terraform-cloud.md); absent: not served. */
  tfe?: Omit<TfeProtocolOptions, 'useCases' | 'logger' | 'clock' | 'rateLimits'>;
  /** The modules' routes, in order, after the spine's (default: every feature's, `FEATURE_ROUTES`). */
  routes?: readonly FeatureRoutes[];
}

/** The limits of docs/security.md "Limits", each a `TRELLIS_…` setting of the server. */
export interface ApiLimits {
  /** Wrong bootstrap tokens per client address (`GET /auth/bootstrap`). */
  bootstrapFailures: FailureLimit;
  /** Failed worker authentications per client address. */
  workerAuthFailures: FailureLimit;
  /** Claim long polls (`POST /api/jobs/claim?wait=N`) open at once. */
  claimLongPolls: LongPollLimits;
}

export const DEFAULT_API_LIMITS: ApiLimits = {
  bootstrapFailures: { limit: 10, windowSeconds: 15 * 60 },
  workerAuthFailures: { limit: 30, windowSeconds: 60 },
  claimLongPolls: { perWorker: 4, total: 1000 },
};

/**
 * Express `trust proxy`: which peers' `X-Forwarded-For` is believed for the client address the
 * limits count per client. `false` (the peer of the socket), `'loopback'`, a hop count, or
 * addresses/CIDRs.
 */
export type TrustProxy = boolean | number | string | readonly string[];

/** Every API route, in the order they are matched: the spine's, then each module's. */
export function apiRoutes(
  options: Pick<ApiOptions, 'useCases' | 'events' | 'shutdownSignal' | 'logStreams' | 'routes' | 'logger'>,
  signIn: Omit<SignInRouteDeps, 'useCases'>,
  longPolls: ClaimLongPolls = new ClaimLongPolls(DEFAULT_API_LIMITS.claimLongPolls),
  jobFlow: JobFlowMetrics | null = null,
): RouteSpec[] {
  const shutdown = options.shutdownSignal ?? new AbortController().signal;
  return [
    ...authRoutes(options.useCases),
    ...signInRoutes({ ...signIn, useCases: options.useCases }),
    ...agentRoutes(options.useCases, options.events, shutdown, longPolls, options.logger, jobFlow),
    ...streamRoutes(options.logStreams ?? new LiveLogStreams(options.useCases, options.events), shutdown),
    ...cliRoutes(options.useCases),
    ...queueRoutes(options.useCases),
    ...vineEditRoutes(options.useCases),
    ...releaseRoutes(options.useCases),
    ...stateRoutes(options.useCases),
    ...stateHistoryRoutes(options.useCases),
    ...(options.routes ?? Object.values(FEATURE_ROUTES)).flatMap((routes) => routes(options.useCases)),
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
  app.set('trust proxy', options.trustProxy ?? false);
  const limits = { ...DEFAULT_API_LIMITS, ...options.limits };
  const rateLimits = options.rateLimits ?? new MemoryRateLimitStore();
  const bootstrapFailures = new FailureLimiter('bootstrap', limits.bootstrapFailures, rateLimits, options.clock);
  const workerFailures = new FailureLimiter('worker-auth', limits.workerAuthFailures, rateLimits, options.clock);
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
  // Each use case call is a span (a no-op unless tracing is configured).
  const useCases = tracedUseCases(options.useCases);
  const longPolls = new ClaimLongPolls(limits.claimLongPolls);
  const logStreams = options.logStreams ?? new LiveLogStreams(useCases, options.events);
  options.metrics?.watch(longPolls, logStreams);
  const routes = apiRoutes(
    { ...options, useCases, logStreams },
    { sessions, signIns, callbackUrl, logger: options.logger },
    longPolls,
    options.metrics?.jobFlow ?? null,
  );
  const allowedOrigins = options.allowedOrigins ?? (() => [options.webOrigin]);
  const isWebOrigin = (origin: string | undefined) => origin !== undefined && allowedOrigins().includes(origin);
  // Built on its first request: turning every schema into JSON Schema costs start-up time and
  // memory a server that is never asked for its document does not need to pay (issue 31).
  let openApi: object | undefined;

  if (options.metrics) app.use(options.metrics.timeRequests);
  app.use(requestId);
  app.use(traceRequests);
  const stopping = options.shutdownSignal ?? new AbortController().signal;
  app.use(refuseWhileStopping(stopping));
  if (options.metrics && options.metricsEndpoint) {
    app.get('/metrics', metricsEndpoint(options.metrics.registry, options.metricsEndpoint.token));
  }
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    try {
      await options.readiness();
      res.json({ status: 'ready' });
    } catch (error) {
      options.logger.warn({ err: error }, 'not ready');
      res.setHeader('Retry-After', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
      sendProblem(res, problem(503, 'not_ready', 'a dependency of the control plane is not reachable'));
    }
  });
  app.get('/api/openapi.json', (_req, res) => {
    openApi ??= buildOpenApiDocument(routes, { title: 'Trellis API', version: options.version });
    res.json(openApi);
  });

  if (options.tfe) {
    app.use(tfeProtocol({ ...options.tfe, useCases, logger: options.logger, clock: options.clock, rateLimits }));
  }

  const bootstrap = new BootstrapSignIn(options.bootstrap);
  const signInByLink = { sessions, failures: bootstrapFailures, hasWebPages: options.web !== undefined };
  app.get(
    '/auth/bootstrap',
    linkSignIn({
      ...signInByLink,
      invalidCode: 'invalid_bootstrap_token',
      redeem: async (token, request) => {
        const email = bootstrap.redeem(token);
        if (email === null) return null;
        return options.useCases.auth.ensureUser({ email, name: 'Administrator' }, { method: 'bootstrap', request });
      },
    }),
  );
  // A teammate's one-time link (`trellis-server users invite EMAIL`).
  app.get(
    '/auth/link',
    linkSignIn({
      ...signInByLink,
      invalidCode: 'invalid_sign_in_link',
      redeem: (token, request) => options.useCases.signInLinks.redeem(token, request),
    }),
  );
  app.post('/auth/signout', async (req, res) => {
    if (!isWebOrigin(req.headers.origin)) {
      sendProblem(res, problem(403, 'csrf_rejected', 'cross-site request refused'));
      return;
    }
    const session = sessions.read(req);
    if (session) {
      await options.useCases.auth.recordSignOut({
        userId: session.userId,
        email: session.email,
        request: requestContext(req, res),
      });
    }
    sessions.clear(res);
    // The web's Sign out button is a plain form (no script): it lands on the sign-in page.
    if (String(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded'))
      res.redirect(303, `${req.baseUrl}/signin`);
    else res.status(204).end();
  });

  const api = express.Router();
  mountRoutes(
    api,
    routes,
    {
      useCases,
      sessions,
      isWebOrigin,
      releaseApiSecret: options.releaseApiSecret,
      workerFailures,
    },
    { store: rateLimits, clock: options.clock },
  );
  app.use(api);
  if (options.web) {
    app.use(
      options.web({
        currentUser: (req, res) => {
          const session = sessions.read(req);
          if (!session) return null;
          sessions.refresh(res, session);
          return {
            userId: session.userId,
            email: session.email,
            provider: session.provider,
            request: requestContext(req, res),
          };
        },
        isWebOrigin,
      }),
    );
  }
  app.use('/api', (req, res) => {
    sendProblem(res, problem(404, 'route_not_found', `no route for ${req.method} ${req.baseUrl}${req.path}`));
  });
  app.use(problemErrorHandler(options.logger, stopping));
  return app;
}
