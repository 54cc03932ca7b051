import { TarGzChecker } from '@trellis/artifacts-fs';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import {
  AesGcmSecretBox,
  type ArtifactStore,
  type Clock,
  type ConfiguredProvider,
  CryptoRandom,
  coreServices,
  DEFAULT_TFE_SETTINGS,
  SignedUrls,
  type EventBus,
  type Random,
  type ServiceRef,
  SystemClock,
  TaskScheduler,
  type Ticker,
  type UnitOfWork,
  type UseCases,
} from '@trellis/core';
import { createApi, JoseJwsSigner, JwtTokenSigner, LiveLogStreams, type Logger, metricsEndpoint } from '@trellis/http';
import express from 'express';
import { createWebRouter } from '@trellis/web';
import type { Express } from 'express';
import type { DependencyContainer } from 'tsyringe';
import { openArtifactStore, openDatabase, requireMigrated } from './adapters.js';
import { deepFreeze, ensureGeneratedSecrets, loadConfig, type ServerConfig } from './config.js';
import { coreSettings } from './coreSettings.js';
import { PublicUrl, webOrigins } from './publicUrl.js';
import { buildProviders, buildVcs } from './providers.js';
import { NodeWebhookSender } from '@trellis/providers';
import { OpaPolicyCompiler } from './OpaPolicyCompiler.js';
import { backgroundTasks, taskObserver } from './backgroundTasks.js';
import { buildContainer, resolve } from './container.js';
import { closeGracefully, listenOn, urlOf } from './httpServers.js';
import { createLogger } from './logger.js';
import { createMetrics, meteredEventBus, metricsRegistry, startTracing } from './observability.js';
import { VERSION } from './version.js';

export interface ControlPlaneOptions {
  /** Environment to configure from (DESIGN §5); defaults to `process.env`. */
  env?: Record<string, string | undefined>;
  /** Overrides applied on top of the environment. */
  config?: Partial<ServerConfig>;
  logger?: Logger;
  clock?: Clock;
  random?: Random;
  /**
   * Run pending migrations before serving (default: `config.migrateOnStart`, true unless
   * TRELLIS_MIGRATE_ON_START=false). When not, a database lacking a migration of this release is
   * refused: `trellis-server migrate` applies it.
   */
  migrate?: boolean;
  /**
   * The buttons of the sign-in page: providers that `GET /auth/signin/{id}` signs in with
   * (default: every provider the configuration sets up).
   */
  signInProviders?: readonly ConfiguredProvider[];
  /**
   * Your own implementations of core's ports, registered in the container under their
   * `coreServices` token instead of the ones the configuration names, before anything is
   * resolved: `{ register: { artifactStore: myStore, eventBus: myBus } }`. A registered artifact
   * store means the configured one (TRELLIS_ARTIFACTS_URL) is not opened. `close()` closes the
   * artifact store in use, a registered one included.
   */
  register?: PortRegistrations;
  /**
   * The last word over the container, called after the defaults and `register` are in and before
   * anything is resolved: `(container) => container.register(coreServices.clock.id, { useValue })`.
   */
  overrides?: (container: DependencyContainer) => void;
  /** What wakes the background tasks (default: real intervals); tests turn testkit's `ManualTicker`. */
  ticker?: Ticker;
}

type Ports = Omit<typeof coreServices, 'useCases'>;

/** An implementation for any of core's ports, by the name of its `coreServices` token. */
export type PortRegistrations = {
  [K in keyof Ports]?: Ports[K] extends ServiceRef<infer T> ? T : never;
};

export interface ControlPlane {
  /** The express app: serve it with `listen()`, or mount it under a prefix of your own app. */
  app: Express;
  /** The configuration, frozen; its `webUrl` is the public URL (the bound port's, once listening). */
  readonly config: ServerConfig;
  useCases: UseCases;
  /** The configured sign-in providers, `{ id, name }` in sign-in page order. */
  signInProviders: ConfiguredProvider[];
  container: DependencyContainer;
  /** The live-log streams: their limits and what they are doing (`stats()`). */
  logStreams: LiveLogStreams;
  /** The background tasks (docs/architecture.md, Background work): `stats()`, `runNow(id)`. */
  scheduler: TaskScheduler;
  /**
   * Listens on `config.host:config.port` (port 0 picks a free one), and the first time also on
   * `TRELLIS_METRICS_PORT` when set (`GET /metrics` only).
   */
  listen(): Promise<{ server: Server; url: string }>;
  /** The URL of `GET /metrics` on its own port once listening; null: none (docs/observability.md). */
  metricsUrl(): string | null;
  /**
   * Stops accepting, ends streams, waits for in-flight requests, then closes the artifact store
   * and the database (its pool and event bus). Idempotent.
   */
  close(): Promise<void>;
}

/** How long in-flight requests get to finish on shutdown before connections are cut. */
const SHUTDOWN_GRACE_MS = 10_000;

/**
 * Builds a control plane from configuration: opens the database and artifact store named by
 * their URLs, applies migrations under a lock, wires the use cases, and starts the background
 * tasks. For embedding: `outer.use('/trellis', (await createControlPlane()).app)`.
 */
export async function createControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const env = options.env ?? process.env;
  // Reading the configuration wrote nothing: the secrets it generated are kept now, at start.
  const config = ensureGeneratedSecrets(deepFreeze({ ...loadConfig(env), ...options.config }));
  const register = options.register ?? {};
  const logger = options.logger ?? createLogger(config.logLevel);
  const defaultClock = register.clock ?? options.clock ?? new SystemClock();
  const database = await openDatabase(config.databaseUrl, logger, env, { poolMax: config.databasePoolMax });
  const publicUrl = new PublicUrl(config);
  let configuredArtifacts: ArtifactStore | null = null;
  try {
    if (options.migrate ?? config.migrateOnStart) await database.migrate();
    else await requireMigrated(database);
    if (!register.artifactStore) configuredArtifacts = await openArtifactStore(config.artifactsUrl, logger, env);
  } catch (error) {
    await database.close();
    throw error;
  }
  const registry = metricsRegistry(config);
  const configuredEvents = register.eventBus ?? database.events;
  const meteredBus = registry && meteredEventBus(configuredEvents, registry);
  const container = buildContainer({
    uow: register.unitOfWork ?? database.uow,
    artifacts: register.artifactStore ?? (configuredArtifacts as ArtifactStore),
    events: meteredBus ?? configuredEvents,
    clock: defaultClock,
    random: register.random ?? options.random ?? new CryptoRandom(),
    signer: register.tokenSigner ?? new JwtTokenSigner(config.cliJwtSecret, defaultClock),
    // Provider tokens at rest: TRELLIS_ENCRYPTION_KEY, or a key derived from CLI_JWT_SECRET.
    secrets:
      register.secretBox ??
      (config.encryptionKeys.length > 0
        ? new AesGcmSecretBox(config.encryptionKeys)
        : AesGcmSecretBox.fromSecret(config.cliJwtSecret)),
    providers: register.providers ?? buildProviders(config),
    vcs: register.vcs ?? buildVcs(config),
    webhooks: register.webhookSender ?? new NodeWebhookSender(),
    policyCompiler:
      register.policyCompiler ??
      new OpaPolicyCompiler(config.opaBin, {
        concurrency: config.policyCheckConcurrency,
        queue: config.policyCheckQueue,
      }),
    jws: register.jwsSigner ?? new JoseJwsSigner(),
    rateLimits: database.rateLimits,
    tarballs: new TarGzChecker(),
    settings: register.settings ?? coreSettings(config, publicUrl),
  });
  let artifacts: ArtifactStore;
  let events: EventBus;
  let uow: UnitOfWork;
  let clock: Clock;
  let useCases: UseCases;
  try {
    options.overrides?.(container);
    // Everything below uses what the container holds, so an override reaches every consumer.
    artifacts = resolve(container, coreServices.artifactStore);
    events = resolve(container, coreServices.eventBus);
    uow = resolve(container, coreServices.unitOfWork);
    clock = resolve(container, coreServices.clock);
    useCases = resolve(container, coreServices.useCases);
    // The OIDC issuer's signing key exists from the first start on (shared by every replica).
    await useCases.workloadIdentity.ensureKey();
  } catch (error) {
    await configuredArtifacts?.close();
    await database.close();
    throw error;
  }
  const stopTracing = startTracing(config, 'trellis-server', VERSION);
  const metrics =
    registry &&
    createMetrics(registry, {
      clock,
      operationalStats: database.operationalStats,
      poolStats: () => database.poolStats(),
      heartbeatTimeoutSeconds: config.heartbeatTimeoutSeconds,
    });
  const shutdown = new AbortController();
  const boundPorts: number[] = [];
  const logStreams = new LiveLogStreams(useCases, events, config.logStreams);
  const app = createApi({
    useCases,
    events,
    clock,
    logger,
    readiness: async () => {
      await uow.check();
      await artifacts.check();
    },
    webOrigin: new URL(config.webUrl).origin,
    allowedOrigins: () => webOrigins(publicUrl.value, config.webUrlExplicit, boundPorts, config.tls ? 'https' : 'http'),
    // Sessions get their own key, derived so one secret configures the server.
    sessionSecret: createHmac('sha256', config.cliJwtSecret).update('trellis web session').digest('base64url'),
    releaseApiSecret: config.releaseApiSecret,
    // The redirect URI registered with every provider; follows the bound port when TRELLIS_WEB_URL is unset.
    signIn: { callbackUrl: () => `${publicUrl.value}/api/auth/callback` },
    bootstrap: config.bootstrapToken
      ? { token: config.bootstrapToken, email: config.bootstrapEmail, oneTime: config.bootstrapTokenOneTime }
      : null,
    shutdownSignal: shutdown.signal,
    trustProxy: config.trustProxy,
    rateLimits: database.rateLimits,
    limits: {
      bootstrapFailures: { limit: config.bootstrapFailureLimit, windowSeconds: config.bootstrapFailureWindowSeconds },
      workerAuthFailures: {
        limit: config.workerAuthFailureLimit,
        windowSeconds: config.workerAuthFailureWindowSeconds,
      },
      claimLongPolls: { perWorker: config.claimLongPollsPerWorker, total: config.claimLongPollsTotal },
    },
    logStreams,
    ...(metrics ? { metrics } : {}),
    // On the main port only when no port of their own is set (then behind the token, if any).
    ...(metrics && config.metrics.port === null ? { metricsEndpoint: { token: config.metrics.token } } : {}),
    version: VERSION,
    // The stock CLI's protocol (docs/terraform-cloud.md); its URLs' key is derived from the one secret.
    tfe: {
      signer: new SignedUrls(createHmac('sha256', config.cliJwtSecret).update('trellis signed urls').digest(), clock),
      publicOrigin: (req) =>
        config.webUrlExplicit ? new URL(config.webUrl).origin : `${req.protocol}://${req.get('host') ?? 'localhost'}`,
      authFailures: { limit: config.tfeAuthFailureLimit, windowSeconds: config.tfeAuthFailureWindowSeconds },
      signedUrlSeconds: DEFAULT_TFE_SETTINGS.signedUrlSeconds,
    },
    web: (session) =>
      createWebRouter({
        ...session,
        useCases,
        webOrigin: new URL(config.webUrl).origin,
        signInProviders: options.signInProviders ?? useCases.signIn.providers(),
        bootstrapEnabled: config.bootstrapToken !== null,
        clock,
        tfeLoginTokenDays: config.tfeLoginTokenDays,
        onError: (error, req) => logger.error({ err: error, path: req.path }, 'web page failed'),
      }),
  });

  // Background work (docs/architecture.md): every loop of the control plane is a task here.
  const scheduler = new TaskScheduler(backgroundTasks(useCases, config, logger), {
    leadership: database.leadership,
    observer: taskObserver(logger, registry),
    ...(options.ticker ? { ticker: options.ticker } : {}),
  });
  scheduler.start();

  const servers: Server[] = [];
  let metricsUrl: string | null = null;
  let closing: Promise<void> | null = null;

  let boundConfig: ServerConfig | null = null;
  return {
    app,
    get config() {
      if (boundConfig?.webUrl !== publicUrl.value) boundConfig = Object.freeze({ ...config, webUrl: publicUrl.value });
      return boundConfig;
    },
    useCases,
    signInProviders: useCases.signIn.providers(),
    container,
    logStreams,
    scheduler,
    async listen() {
      if (metrics && config.metrics.port !== null && metricsUrl === null) {
        const metricsApp = express();
        metricsApp.disable('x-powered-by');
        metricsApp.get('/metrics', metricsEndpoint(metrics.registry, config.metrics.token));
        const metricsServer = await listenOn(createServer(metricsApp), config.metrics.port, config.host);
        servers.push(metricsServer);
        metricsUrl = `${urlOf(config.host, metricsServer)}/metrics`;
      }
      const server = await listenOn(
        config.tls
          ? createTlsServer({ cert: readFileSync(config.tls.certFile), key: readFileSync(config.tls.keyFile) }, app)
          : createServer(app),
        config.port,
        config.host,
      );
      servers.push(server);
      const { port } = server.address() as AddressInfo;
      boundPorts.push(port);
      // With no TRELLIS_WEB_URL, the web interface is this server at the port actually bound.
      publicUrl.bind(port);
      return { server, url: urlOf(config.host, server, config.tls ? 'https' : 'http') };
    },
    metricsUrl: () => metricsUrl,
    close() {
      closing ??= (async () => {
        // Runs in flight are aborted and awaited (a delivery round finishes its requests, each
        // bounded by its timeout) while the servers close, and all before the database closes.
        const stopping = scheduler.close();
        shutdown.abort();
        await Promise.all(servers.map((server) => closeGracefully(server, SHUTDOWN_GRACE_MS)));
        await stopping;
        // Heartbeats accepted until the servers closed reach the database before it closes.
        await useCases.workers
          .flushHeartbeats()
          .catch((error) => logger.error({ err: error }, 'heartbeat flush at shutdown failed'));
        // The artifact store in use (a registered one too) and the configured one if unused.
        await Promise.all([artifacts.close(), configuredArtifacts !== artifacts ? configuredArtifacts?.close() : null]);
        await stopTracing?.();
        // The database's own bus closes with the database; a registered one is closed here.
        const busInUse = events === meteredBus ? configuredEvents : events;
        if (busInUse !== database.events) await busInUse.close();
        await database.close();
      })();
      return closing;
    },
  };
}
