import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  AesGcmSecretBox,
  type ArtifactStore,
  type Clock,
  type ConfiguredProvider,
  CryptoRandom,
  coreServices,
  DEFAULT_CORE_SETTINGS,
  DEFAULT_VCS_FEEDBACK_SETTINGS,
  DEFAULT_NOTIFICATION_SETTINGS,
  DEFAULT_WORKLOAD_IDENTITY_SETTINGS,
  type EventBus,
  type NotificationSettings,
  type Random,
  type ServiceRef,
  SystemClock,
  type UnitOfWork,
  type UseCases,
  type WorkloadIdentitySettings,
} from '@trellis/core';
import { createApi, JoseJwsSigner, JwtTokenSigner, LiveLogStreams, type Logger, metricsEndpoint } from '@trellis/http';
import express from 'express';
import { createWebRouter } from '@trellis/web';
import type { Express } from 'express';
import type { DependencyContainer } from 'tsyringe';
import { type DatabaseAdapter, openArtifactStore, openDatabase } from './adapters.js';
import { ConfigError, ensureGeneratedSecrets, loadConfig, type ServerConfig } from './config.js';
import { buildProviders, buildVcs } from './providers.js';
import { NodeWebhookSender } from '@trellis/providers';
import { OpaPolicyCompiler } from './OpaPolicyCompiler.js';
import { buildContainer, resolve } from './container.js';
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
}

type Ports = Omit<typeof coreServices, 'useCases'>;

/** An implementation for any of core's ports, by the name of its `coreServices` token. */
export type PortRegistrations = {
  [K in keyof Ports]?: Ports[K] extends ServiceRef<infer T> ? T : never;
};

export interface ControlPlane {
  /** The express app: serve it with `listen()`, or mount it under a prefix of your own app. */
  app: Express;
  config: ServerConfig;
  useCases: UseCases;
  /** The configured sign-in providers, `{ id, name }` in sign-in page order. */
  signInProviders: ConfiguredProvider[];
  container: DependencyContainer;
  /** The live-log streams: their limits and what they are doing (`stats()`). */
  logStreams: LiveLogStreams;
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

/**
 * A server that does not migrate runs on a schema at least as new as its release: one a newer
 * release expanded is fine (docs/operations.md, Upgrades), one missing a migration is not.
 */
async function requireMigrated(database: DatabaseAdapter): Promise<void> {
  const pending = await database.pendingMigrations();
  if (pending.length > 0) {
    throw new ConfigError(
      `the database lacks ${pending.length} migration(s) of this release (${pending.join(', ')}): ` +
        'run `trellis-server migrate` first (TRELLIS_MIGRATE_ON_START=false leaves migrations to it)',
    );
  }
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
  // Reading the configuration wrote nothing: the secrets it generated are kept now, at start.
  ensureGeneratedSecrets(config);
  const register = options.register ?? {};
  const logger = options.logger ?? createLogger(env.TRELLIS_LOG_LEVEL || 'info');
  const defaultClock = register.clock ?? options.clock ?? new SystemClock();
  const database = await openDatabase(config.databaseUrl, logger, env, { poolMax: config.databasePoolMax });
  // Mutable: the web URL follows the bound port when TRELLIS_WEB_URL is unset (see listen()).
  const notificationSettings: NotificationSettings = {
    ...DEFAULT_NOTIFICATION_SETTINGS,
    allowPrivateUrls: config.notificationsAllowPrivateUrls,
    retryBaseSeconds: config.notificationRetryBaseSeconds,
    timeoutSeconds: config.notificationTimeoutSeconds,
    webUrl: config.webUrl,
  };
  // Mutable too: without TRELLIS_OIDC_ISSUER the issuer is the public URL, which may follow the bound port.
  const workloadIdentitySettings: WorkloadIdentitySettings = {
    ...DEFAULT_WORKLOAD_IDENTITY_SETTINGS,
    issuer: config.oidc.issuer ?? config.webUrl,
    algorithm: config.oidc.algorithm,
    tokenLifetimeSeconds: config.oidc.tokenLifetimeSeconds,
    keyRotationSeconds: config.oidc.keyRotationDays * 86_400,
  };
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
    policyCompiler: register.policyCompiler ?? new OpaPolicyCompiler(config.opaBin, config.policyChecks),
    jws: register.jwsSigner ?? new JoseJwsSigner(),
    settings: register.settings ?? {
      ...DEFAULT_CORE_SETTINGS,
      heartbeatTimeoutSeconds: config.heartbeatTimeoutSeconds,
      lostJobTimeoutSeconds: config.lostJobTimeoutSeconds,
      heartbeatFlushSeconds: config.heartbeatFlushSeconds,
      workerCredentialCacheSeconds: config.workerAuthCacheSeconds,
      maxStateBytes: config.maxStateBytes,
      stateVersionsKept: config.stateVersionsKept,
      maxExecutionMetadataBytes: config.maxExecutionMetadataBytes,
      maxLogBytesPerJob: config.maxLogBytesPerJob,
      logGraceMinutes: config.logGraceMinutes,
      logRetentionDays: config.logRetentionDays,
      auditRetentionDays: config.auditRetentionDays,
      pageLimits: config.pageLimits,
      notifications: notificationSettings,
      workloadIdentity: workloadIdentitySettings,
      vcsFeedback: { ...DEFAULT_VCS_FEEDBACK_SETTINGS, intervalSeconds: config.vcsFeedbackIntervalSeconds },
    },
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

  // Steady heartbeats are written together (HeartbeatBuffer); a failed flush keeps them for the next.
  const heartbeatFlusher =
    config.heartbeatFlushSeconds > 0
      ? setInterval(() => {
          useCases.workers.flushHeartbeats().catch((error) => logger.error({ err: error }, 'heartbeat flush failed'));
        }, config.heartbeatFlushSeconds * 1000)
      : null;
  heartbeatFlusher?.unref();

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

  // Drift checks: every replica looks for due checks; each is taken by one (FOR UPDATE SKIP LOCKED).
  let scheduling = false;
  const driftScheduler = setInterval(() => {
    if (scheduling) return;
    scheduling = true;
    useCases.drift
      .queueDue()
      .then(
        (queued) => {
          for (const job of queued) logger.info({ job_id: job.id, vine_id: job.vine_id }, 'drift check queued');
        },
        (error) => logger.error({ err: error }, 'drift scheduling failed'),
      )
      .finally(() => {
        scheduling = false;
      });
  }, config.driftSchedulerIntervalSeconds * 1000);
  driftScheduler.unref();

  // Retention: logs of jobs finished longer ago than TRELLIS_LOG_RETENTION_DAYS, in bounded batches.
  let pruning = false;
  const retention = setInterval(() => {
    if (pruning) return;
    pruning = true;
    useCases.logs
      .deleteExpired()
      .then(
        (deleted) => {
          if (deleted > 0) logger.info({ deleted_chunks: deleted }, 'deleted logs past their retention');
        },
        (error) => logger.error({ err: error }, 'log retention failed'),
      )
      .finally(() => {
        pruning = false;
      });
  }, config.retentionIntervalSeconds * 1000);
  retention.unref();

  // The notification outbox: due deliveries sent, one round at a time (SKIP LOCKED across replicas).
  let delivering: Promise<void> | null = null;
  const deliveries = setInterval(() => {
    if (delivering) return;
    delivering = useCases.notifications
      .deliverDue()
      .then(
        () => undefined,
        (error) => logger.error({ err: error }, 'notification delivery failed'),
      )
      .finally(() => {
        delivering = null;
      });
  }, config.notificationIntervalSeconds * 1000);
  deliveries.unref();
  // Feedback at the git provider (issue 13): commit statuses and pull request comments, each
  // attempt logged (never a token); a refused or unreachable provider is retried, never fails a job.
  let sendingFeedback: Promise<void> | null = null;
  const feedback = setInterval(() => {
    if (sendingFeedback) return;
    sendingFeedback = useCases.vcsFeedback
      .deliverDue()
      .then(
        (reports) => {
          for (const report of reports) {
            const fields = {
              vcs_feedback: report.id,
              job_id: report.job_id,
              provider: report.provider,
              kind: report.kind,
            };
            if (report.status === 'delivered')
              logger.info({ ...fields, attempts: report.attempts }, 'git provider feedback delivered');
            else if (report.status === 'superseded')
              logger.info(fields, 'git provider feedback superseded by a newer one');
            else
              logger.warn(
                { ...fields, status: report.status, attempts: report.attempts, error: report.error },
                'git provider feedback not delivered',
              );
          }
        },
        (error) => logger.error({ err: error }, 'git provider feedback failed'),
      )
      .finally(() => {
        sendingFeedback = null;
      });
  }, config.vcsFeedbackIntervalSeconds * 1000);
  feedback.unref();
  // Retention of the audit log: entries older than TRELLIS_AUDIT_RETENTION_DAYS (system work).
  let pruningAudit = false;
  const auditRetention = setInterval(() => {
    if (pruningAudit) return;
    pruningAudit = true;
    useCases.audit
      .prune()
      .then(
        (deleted) => {
          if (deleted > 0)
            logger.info({ deleted_audit_entries: deleted }, 'deleted audit entries past their retention');
        },
        (error) => logger.error({ err: error }, 'audit retention failed'),
      )
      .finally(() => {
        pruningAudit = false;
      });
  }, config.retentionIntervalSeconds * 1000);
  auditRetention.unref();

  const servers: Server[] = [];
  let metricsUrl: string | null = null;
  let closing: Promise<void> | null = null;

  return {
    app,
    config,
    useCases,
    signInProviders: useCases.signIn.providers(),
    container,
    logStreams,
    async listen() {
      if (metrics && config.metrics.port !== null && metricsUrl === null) {
        const metricsApp = express();
        metricsApp.disable('x-powered-by');
        metricsApp.get('/metrics', metricsEndpoint(metrics.registry, config.metrics.token));
        const metricsServer = await listenOn(createServer(metricsApp), config.metrics.port, config.host);
        servers.push(metricsServer);
        metricsUrl = `${urlOf(config.host, metricsServer)}/metrics`;
      }
      const server = await listenOn(createServer(app), config.port, config.host);
      servers.push(server);
      const { port } = server.address() as AddressInfo;
      boundPorts.push(port);
      // With no TRELLIS_WEB_URL, the web interface is this server at the port actually bound.
      if (!config.webUrlExplicit) {
        config.webUrl = `http://localhost:${port}`;
        notificationSettings.webUrl = config.webUrl;
        if (config.oidc.issuer === null) workloadIdentitySettings.issuer = config.webUrl;
      }
      return { server, url: urlOf(config.host, server) };
    },
    metricsUrl: () => metricsUrl,
    close() {
      closing ??= (async () => {
        clearInterval(sweeper);
        clearInterval(retention);
        clearInterval(driftScheduler);
        clearInterval(deliveries);
        clearInterval(feedback);
        clearInterval(auditRetention);
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
        // Heartbeats accepted until the servers closed reach the database before it closes.
        if (heartbeatFlusher) clearInterval(heartbeatFlusher);
        await useCases.workers
          .flushHeartbeats()
          .catch((error) => logger.error({ err: error }, 'heartbeat flush at shutdown failed'));
        // The artifact store in use (a registered one too) and the configured one if unused.
        // A delivery round in flight finishes (each request is bounded by its timeout) before the database closes.
        await delivering;
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

async function listenOn(server: Server, port: number, host: string): Promise<Server> {
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(port, host, () => done());
  });
  return server;
}

function urlOf(host: string, server: Server): string {
  const { port } = server.address() as AddressInfo;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}
