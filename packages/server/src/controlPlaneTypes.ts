import type { Server } from 'node:http';
import type {
  Clock,
  ConfiguredProvider,
  coreServices,
  Random,
  ServiceRef,
  TaskScheduler,
  Ticker,
  UseCases,
} from '@trellis/core';
import type { LiveLogStreams, Logger } from '@trellis/http';
import type { LiveLists } from '@trellis/web';
import type { Express } from 'express';
import type { DependencyContainer } from 'tsyringe';
import type { ServerConfig } from './config.js';
import type { TrellisModule } from './modules.js';

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
   * The last word over the container, called after the defaults, the modules' services and
   * `register` are in and before anything is resolved: any port or module service by its token,
   * `(container) => container.register(orgServices.orgs.id, { useValue: myOrgs })`.
   */
  overrides?: (container: DependencyContainer) => void;
  /** The features, in order (default: `MODULES`, every feature of Trellis); docs/architecture.md, "Modules". */
  modules?: readonly TrellisModule[];
  /** What wakes the background tasks (default: real intervals); tests turn testkit's `ManualTicker`. */
  ticker?: Ticker;
}

/** The ports: the tokens of `coreServices` an adapter implements (not what core builds from them). */
type Ports = Omit<
  typeof coreServices,
  'useCases' | 'deps' | 'jobHooks' | 'jobLifecycle' | 'workerCredentials' | 'heartbeats'
>;

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
  /** The web's live lists (`GET /live/jobs`, `/live/queue`, `/live/fleet`): limits and `stats()`. */
  liveLists: LiveLists;
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
