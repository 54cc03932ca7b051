import { createHmac } from 'node:crypto';
import {
  type Clock,
  type ConfiguredProvider,
  DEFAULT_TFE_SETTINGS,
  type EventBus,
  SignedUrls,
  type UseCases,
} from '@trellis/core';
import type { ApiOptions, LiveLogStreams, Logger } from '@trellis/http';
import { createWebRouter, type LiveLists } from '@trellis/web';
import type { DatabaseAdapter } from './adapters.js';
import type { ServerConfig } from './config.js';
import type { createMetrics } from './observability.js';
import type { TrellisModule } from './modules.js';
import { type PublicUrl, webOrigins } from './publicUrl.js';
import { VERSION } from './version.js';

export interface ApiSources {
  config: ServerConfig;
  useCases: UseCases;
  events: EventBus;
  clock: Clock;
  logger: Logger;
  database: DatabaseAdapter;
  publicUrl: PublicUrl;
  /** The ports bound so far (the allowed origins follow them when TRELLIS_WEB_URL is unset). */
  boundPorts: readonly number[];
  logStreams: LiveLogStreams;
  /** The web's live lists (jobs, queue, fleet). */
  liveLists: LiveLists;
  /** The features whose routes and pages are served. */
  modules: readonly TrellisModule[];
}

/** What the running control plane adds: its readiness check, its shutdown, its metrics. */
export interface ApiRuntime {
  readiness: () => Promise<void>;
  shutdownSignal: AbortSignal;
  metrics: ReturnType<typeof createMetrics> | null | undefined;
  signInProviders: readonly ConfiguredProvider[] | undefined;
}

/**
 * The HTTP API's options as the configuration sets them: origins, session and signed-URL keys
 * (each derived from the one secret), sign-in, limits, the stock CLI's protocol and the web
 * interface.
 */
export function apiOptions(
  {
    config,
    useCases,
    events,
    clock,
    logger,
    database,
    publicUrl,
    boundPorts,
    logStreams,
    liveLists,
    modules,
  }: ApiSources,
  run: ApiRuntime,
): ApiOptions {
  return {
    useCases,
    events,
    clock,
    logger,
    readiness: run.readiness,
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
    shutdownSignal: run.shutdownSignal,
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
    // Each module's routes and pages, in the modules' order.
    routes: modules.flatMap((module) => (module.routes ? [module.routes] : [])),
    ...(run.metrics ? { metrics: run.metrics } : {}),
    // On the main port only when no port of their own is set (then behind the token, if any).
    ...(run.metrics && config.metrics.port === null ? { metricsEndpoint: { token: config.metrics.token } } : {}),
    version: VERSION,
    // The stock CLI's protocol (docs/terraform-cloud.md); its URLs' key is derived from the one secret.
    tfe: {
      signer: new SignedUrls(createHmac('sha256', config.cliJwtSecret).update('trellis signed urls').digest(), clock),
      publicOrigin: (req) =>
        config.webUrlExplicit ? new URL(config.webUrl).origin : `${req.protocol}://${req.get('host') ?? 'localhost'}`,
      authFailures: { limit: config.tfeAuthFailureLimit, windowSeconds: config.tfeAuthFailureWindowSeconds },
      signedUrlSeconds: DEFAULT_TFE_SETTINGS.signedUrlSeconds,
      // The registry's protocols of the modules served, in the modules' order.
      registries: modules.flatMap((module) => module.protocols ?? []),
    },
    web: (session) =>
      createWebRouter({
        ...session,
        useCases,
        webOrigin: new URL(config.webUrl).origin,
        signInProviders: run.signInProviders ?? useCases.signIn.providers(),
        bootstrapEnabled: config.bootstrapToken !== null,
        clock,
        tfeLoginTokenDays: config.tfeLoginTokenDays,
        pages: modules.flatMap((module) => (module.pages ? [module.pages] : [])),
        live: { lists: liveLists, shutdown: run.shutdownSignal },
        onError: (error, req) => logger.error({ err: error, path: req.path }, 'web page failed'),
      }),
  };
}
