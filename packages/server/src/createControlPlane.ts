import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import {
  type ArtifactStore,
  type Clock,
  coreServices,
  type EventBus,
  SystemClock,
  TaskScheduler,
  type UnitOfWork,
  type UseCases,
} from '@trellis/core';
import { createApi, LiveLogStreams, metricsEndpoint } from '@trellis/http';
import { LiveLists } from '@trellis/web';
import express from 'express';
import { openArtifactStore, openDatabase, requireMigrated } from './adapters.js';
import { deepFreeze, ensureGeneratedSecrets, loadConfig, type ServerConfig } from './config.js';
import { PublicUrl } from './publicUrl.js';
import { backgroundTasks, taskObserver } from './backgroundTasks.js';
import { buildContainer, resolve } from './container.js';
import { closeGracefully, listenOn, urlOf } from './httpServers.js';
import { createLogger } from './logger.js';
import { createMetrics, meteredEventBus, metricsRegistry, startTracing } from './observability.js';
import { apiOptions } from './apiOptions.js';
import { configuredAdapters } from './configuredAdapters.js';
import { MODULES } from './modules.js';
import type { ControlPlane, ControlPlaneOptions } from './controlPlaneTypes.js';
import { VERSION } from './version.js';

export type { ControlPlane, ControlPlaneOptions, PortRegistrations } from './controlPlaneTypes.js';

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
  const modules = options.modules ?? MODULES;
  const container = buildContainer(
    configuredAdapters(
      { config, register, database, publicUrl, clock: defaultClock, random: options.random },
      {
        artifacts: register.artifactStore ?? (configuredArtifacts as ArtifactStore),
        events: meteredBus ?? configuredEvents,
      },
    ),
    modules,
  );
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
  const stopTracing = await startTracing(config, 'trellis-server', VERSION);
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
  // The web's live lists (issue 29): jobs, queue and fleet, over the same event bus as the live logs.
  const liveLists = new LiveLists(useCases, events, clock);
  const app = createApi(
    apiOptions(
      { config, useCases, events, clock, logger, database, publicUrl, boundPorts, logStreams, liveLists, modules },
      {
        readiness: async () => {
          await uow.check();
          await artifacts.check();
        },
        shutdownSignal: shutdown.signal,
        metrics,
        signInProviders: options.signInProviders,
      },
    ),
  );

  // Background work (docs/architecture.md): each module's tasks, and the live-log streams'.
  const scheduler = new TaskScheduler(
    [...backgroundTasks(modules, useCases, config, logger), ...logStreams.tasks(), ...liveLists.tasks()],
    {
      leadership: database.leadership,
      observer: taskObserver(logger, registry),
      ...(options.ticker ? { ticker: options.ticker } : {}),
    },
  );
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
    liveLists,
    scheduler,
    async listen() {
      if (metrics && config.metrics.port !== null && metricsUrl === null) {
        const metricsApp = express();
        metricsApp.disable('x-powered-by');
        metricsApp.get('/metrics', metricsEndpoint(metrics.registry, config.metrics.token));
        const metricsServer = await listenOn(createServer(metricsApp), config.metrics.port, config.host, {
          bodyIdleMs: config.bodyIdleTimeoutSeconds * 1000,
        });
        servers.push(metricsServer);
        metricsUrl = `${urlOf(config.host, metricsServer)}/metrics`;
      }
      const server = await listenOn(
        config.tls
          ? createTlsServer({ cert: readFileSync(config.tls.certFile), key: readFileSync(config.tls.keyFile) }, app)
          : createServer(app),
        config.port,
        config.host,
        { bodyIdleMs: config.bodyIdleTimeoutSeconds * 1000 },
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
