import {
  auditModule,
  auditRetentionTask,
  type CoreModule,
  coreModule,
  deletedVineRetentionTask,
  driftCheckTask,
  driftModule,
  fleetModule,
  heartbeatFlushTask,
  logRetentionTask,
  lostJobSweepTask,
  mirrorModule,
  notificationsModule,
  orgsModule,
  outboxDeliveryTask,
  outboxModule,
  policiesModule,
  registryModulesModule,
  moduleRepositoriesModule,
  type ScheduledTask,
  tokensModule,
  type UseCases,
  vcsModule,
  workloadIdentityModule,
  registryProvidersModule,
} from '@trellis/core';
import {
  FEATURE_ROUTES,
  type FeatureRoutes,
  type Logger,
  mirrorProtocol,
  modulesProtocol,
  providersProtocol,
  type RegistryProtocol,
} from '@trellis/http';
import { FEATURE_PAGES, type FeaturePages } from '@trellis/web';
import type { ServerConfig } from './config.js';
import type { SERVER_SETTINGS } from './settings/table.js';

/**
 * A feature of the control plane, whole: core's part (its services under typed tokens, its hooks
 * on the job lifecycle), the settings it reads, its API routes, its pages and its background
 * tasks. `createControlPlane` loops over `MODULES` (docs/architecture.md, "Modules").
 */
export interface TrellisModule extends CoreModule {
  /** The rows of the settings table (`settings/`) the feature reads. */
  readonly settings: readonly (keyof typeof SERVER_SETTINGS)[];
  /** Its API routes (`http/src/<feature>/`), after the spine's. */
  readonly routes?: FeatureRoutes;
  /** Its pages (`web/src/<feature>/`), after the spine's. */
  readonly pages?: FeaturePages;
  /** Its protocols of the stock CLI's private registry (http's `REGISTRY_PROTOCOLS`), beside the TFE API. */
  readonly protocols?: readonly RegistryProtocol[];
  /** Its background tasks (`core/src/<feature>/*Tasks.ts`), every interval a setting. */
  readonly tasks?: (useCases: UseCases, config: ServerConfig, logger: Logger) => ScheduledTask[];
}

/** The one list of modules, in the order their hooks run within a stage (core's `CORE_MODULES`). */
export const MODULES: readonly TrellisModule[] = [
  {
    ...coreModule,
    settings: [
      'heartbeatFlushSeconds',
      'sweepIntervalSeconds',
      'retentionIntervalSeconds',
      'logRetentionDays',
      'deletedVineRetentionDays',
    ],
    tasks: (useCases, config, logger) => [
      // 0 turns batching off: each heartbeat is written with its request.
      ...(config.heartbeatFlushSeconds > 0 ? [heartbeatFlushTask(useCases.workers, config.heartbeatFlushSeconds)] : []),
      lostJobSweepTask(useCases.jobs, config.sweepIntervalSeconds, logger),
      logRetentionTask(useCases.logs, config.retentionIntervalSeconds, logger),
      deletedVineRetentionTask(useCases.vineEdits, config.retentionIntervalSeconds, logger),
    ],
  },
  {
    ...notificationsModule,
    settings: ['notificationTimeoutSeconds', 'notificationTestsPerMinute', 'notificationsAllowPrivateUrls'],
    routes: FEATURE_ROUTES.notifications,
    pages: FEATURE_PAGES.notifications,
  },
  {
    ...policiesModule,
    settings: ['opaBin', 'policyCheckConcurrency', 'policyCheckQueue'],
    routes: FEATURE_ROUTES.policies,
    pages: FEATURE_PAGES.policies,
  },
  {
    ...vcsModule,
    settings: ['maxManualVcsConnections'],
    routes: FEATURE_ROUTES.vcs,
  },
  {
    // Notifications and git feedback are delivered through one outbox, with its own settings.
    ...outboxModule,
    settings: ['outbox'],
    tasks: (useCases, config, logger) => [outboxDeliveryTask(useCases.outbox, config.outbox.intervalSeconds, logger)],
  },
  {
    ...driftModule,
    settings: ['driftSchedulerIntervalSeconds'],
    routes: FEATURE_ROUTES.drift,
    tasks: (useCases, config, logger) => [driftCheckTask(useCases.drift, config.driftSchedulerIntervalSeconds, logger)],
  },
  { ...fleetModule, settings: [], pages: FEATURE_PAGES.fleet },
  { ...orgsModule, settings: [], routes: FEATURE_ROUTES.orgs, pages: FEATURE_PAGES.orgs },
  { ...tokensModule, settings: [], routes: FEATURE_ROUTES.tokens, pages: FEATURE_PAGES.tokens },
  {
    ...auditModule,
    settings: ['auditRetentionDays', 'retentionIntervalSeconds'],
    routes: FEATURE_ROUTES.audit,
    pages: FEATURE_PAGES.audit,
    tasks: (useCases, config, logger) => [auditRetentionTask(useCases.audit, config.retentionIntervalSeconds, logger)],
  },
  { ...workloadIdentityModule, settings: ['oidc'], routes: FEATURE_ROUTES.workloadIdentity },
  {
    ...registryModulesModule,
    settings: ['registryModuleMaxBytes'],
    routes: FEATURE_ROUTES.registryModules,
    protocols: [modulesProtocol],
  },
  {
    ...registryProvidersModule,
    settings: ['registryProviderMaxBytes'],
    routes: FEATURE_ROUTES.registryProviders,
    protocols: [providersProtocol],
  },
  {
    ...mirrorModule,
    settings: ['mirrorMaxArchiveMb', 'mirrorUpstream', 'mirrorUpstreamCredentialsFile', 'mirrorUpstreamTimeoutSeconds'],
    routes: FEATURE_ROUTES.mirror,
    protocols: [mirrorProtocol],
  },
  {
    ...moduleRepositoriesModule,
    settings: [],
    routes: FEATURE_ROUTES.moduleRepositories,
    pages: FEATURE_PAGES.registry,
  },
];
