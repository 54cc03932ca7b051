import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  AesGcmSecretBox,
  type Clock,
  type ConfiguredProvider,
  CryptoRandom,
  coreServices,
  DEFAULT_CORE_SETTINGS,
  type Random,
  SystemClock,
  type UseCases,
} from '@trellis/core';
import { createApi, JwtTokenSigner, type Logger } from '@trellis/http';
import { createWebRouter, type SignInProvider } from '@trellis/web';
import type { Express } from 'express';
import type { DependencyContainer } from 'tsyringe';
import { openArtifactStore, openDatabase } from './adapters.js';
import { loadConfig, type ServerConfig } from './config.js';
import { buildProviders } from './providers.js';
import { buildContainer, resolve } from './container.js';
import { createLogger } from './logger.js';
import { VERSION } from './version.js';

export interface ControlPlaneOptions {
  /** Environment to configure from (DESIGN §5); defaults to `process.env`. */
  env?: Record<string, string | undefined>;
  /** Overrides applied on top of the environment. */
  config?: Partial<ServerConfig>;
  logger?: Logger;
  clock?: Clock;
  random?: Random;
  /** Run pending migrations before serving (default true). */
  migrate?: boolean;
  /**
   * The buttons of the sign-in page: providers that `GET /auth/signin/{id}` signs in with
   * (default: every provider the configuration sets up).
   */
  signInProviders?: readonly SignInProvider[];
}

export interface ControlPlane {
  /** The express app: serve it with `listen()`, or mount it under a prefix of your own app. */
  app: Express;
  config: ServerConfig;
  useCases: UseCases;
  /** The configured sign-in providers, `{ id, name }` in sign-in page order. */
  signInProviders: ConfiguredProvider[];
  container: DependencyContainer;
  /** Listens on `config.host:config.port` (port 0 picks a free one). */
  listen(): Promise<{ server: Server; url: string }>;
  /** Stops accepting, ends streams, waits for in-flight requests, closes the pool. Idempotent. */
  close(): Promise<void>;
}

/**
 * Origins the web interface may use. An explicit TRELLIS_WEB_URL is the only one; the default
 * (a server on this machine) also accepts the loopback spellings of the bound port, since a
 * browser may open it as localhost or 127.0.0.1.
 */
function webOrigins(config: ServerConfig, boundPorts: readonly number[]): string[] {
  const origins = [new URL(config.webUrl).origin];
  if (!config.webUrlExplicit) {
    for (const port of boundPorts) {
      origins.push(`http://localhost:${port}`, `http://127.0.0.1:${port}`, `http://[::1]:${port}`);
    }
  }
  return origins;
}

/** How long in-flight requests get to finish on shutdown before connections are cut. */
const SHUTDOWN_GRACE_MS = 10_000;

/**
 * Builds a control plane from configuration: opens the database and artifact store named by
 * their URLs, applies migrations under a lock, wires the use cases, and starts the lost-agent
 * sweep. For embedding: `outer.use('/trellis', (await createControlPlane()).app)`.
 */
export async function createControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const env = options.env ?? process.env;
  const config = { ...loadConfig(env), ...options.config };
  const logger = options.logger ?? createLogger(env.TRELLIS_LOG_LEVEL || 'info');
  const clock = options.clock ?? new SystemClock();
  const database = await openDatabase(config.databaseUrl, logger);
  let artifacts: Awaited<ReturnType<typeof openArtifactStore>>;
  try {
    if (options.migrate !== false) await database.migrate();
    artifacts = await openArtifactStore(config.artifactsUrl, logger, env);
  } catch (error) {
    await database.close();
    throw error;
  }
  const container = buildContainer({
    uow: database.uow,
    artifacts,
    events: database.events,
    clock,
    random: options.random ?? new CryptoRandom(),
    signer: new JwtTokenSigner(config.cliJwtSecret, clock),
    // Provider tokens at rest: TRELLIS_ENCRYPTION_KEY, or a key derived from CLI_JWT_SECRET.
    secrets:
      config.encryptionKeys.length > 0
        ? new AesGcmSecretBox(config.encryptionKeys)
        : AesGcmSecretBox.fromSecret(config.cliJwtSecret),
    providers: buildProviders(config),
    settings: {
      ...DEFAULT_CORE_SETTINGS,
      heartbeatTimeoutSeconds: config.heartbeatTimeoutSeconds,
      lostJobTimeoutSeconds: config.lostJobTimeoutSeconds,
    },
  });
  const useCases = resolve(container, coreServices.useCases);
  const shutdown = new AbortController();
  const boundPorts: number[] = [];
  const app = createApi({
    useCases,
    events: database.events,
    clock,
    logger,
    readiness: async () => {
      await database.uow.check();
      await artifacts.check();
    },
    webOrigin: new URL(config.webUrl).origin,
    allowedOrigins: () => webOrigins(config, boundPorts),
    // Sessions get their own key, derived so one secret configures the server.
    sessionSecret: createHmac('sha256', config.cliJwtSecret).update('trellis web session').digest('base64url'),
    releaseApiSecret: config.releaseApiSecret,
    // The redirect URI registered with every provider; follows the bound port when TRELLIS_WEB_URL is unset.
    signIn: { callbackUrl: () => `${config.webUrl}/api/auth/callback` },
    bootstrap: config.bootstrapToken
      ? { token: config.bootstrapToken, email: config.bootstrapEmail, oneTime: config.bootstrapTokenOneTime }
      : null,
    shutdownSignal: shutdown.signal,
    version: VERSION,
    web: (session) =>
      createWebRouter({
        ...session,
        useCases,
        webOrigin: new URL(config.webUrl).origin,
        signInProviders: options.signInProviders ?? useCases.signIn.providers(),
        bootstrapEnabled: config.bootstrapToken !== null,
        clock,
        onError: (error, req) => logger.error({ err: error, path: req.path }, 'web page failed'),
      }),
  });

  const sweeper = setInterval(() => {
    useCases.jobs.sweepLostJobs().then(
      (failed) => {
        for (const job of failed)
          logger.warn({ job_id: job.id, worker_id: job.claimed_by_worker_id }, 'agent lost; job failed');
      },
      (error) => logger.error({ err: error }, 'lost-agent sweep failed'),
    );
  }, config.sweepIntervalSeconds * 1000);
  sweeper.unref();

  const servers: Server[] = [];
  let closing: Promise<void> | null = null;

  return {
    app,
    config,
    useCases,
    signInProviders: useCases.signIn.providers(),
    container,
    async listen() {
      const server = createServer(app);
      server.keepAliveTimeout = 65_000;
      await new Promise<void>((done, fail) => {
        server.once('error', fail);
        server.listen(config.port, config.host, () => done());
      });
      servers.push(server);
      const { port } = server.address() as AddressInfo;
      boundPorts.push(port);
      // With no TRELLIS_WEB_URL, the web interface is this server at the port actually bound.
      if (!config.webUrlExplicit) config.webUrl = `http://localhost:${port}`;
      const host = config.host.includes(':') ? `[${config.host}]` : config.host;
      return { server, url: `http://${host}:${port}` };
    },
    close() {
      closing ??= (async () => {
        clearInterval(sweeper);
        shutdown.abort();
        await Promise.all(
          servers.map(
            (server) =>
              new Promise<void>((done) => {
                const force = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
                // Keep-alive connections become idle as their last request finishes; close them then.
                const idle = setInterval(() => server.closeIdleConnections(), 50);
                server.close(() => {
                  clearTimeout(force);
                  clearInterval(idle);
                  done();
                });
                server.closeIdleConnections();
              }),
          ),
        );
        await database.close();
      })();
      return closing;
    },
  };
}
