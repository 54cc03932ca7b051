import {
  type CoreSettings,
  DEFAULT_CORE_SETTINGS,
  DEFAULT_NOTIFICATION_SETTINGS,
  DEFAULT_MIRROR_SETTINGS,
  DEFAULT_REGISTRY_SETTINGS,
  DEFAULT_TFE_SETTINGS,
  DEFAULT_WORKLOAD_IDENTITY_SETTINGS,
} from '@trellis/core';
import type { ServerConfig } from './config.js';
import { frozenWithLive, type PublicUrl } from './publicUrl.js';

/**
 * Core's settings from the server's, frozen. The links in notifications and git feedback, and the
 * OIDC issuer when `TRELLIS_OIDC_ISSUER` is unset, are the public URL, read when used: it follows
 * the port bound when `TRELLIS_WEB_URL` is unset.
 */
export function coreSettings(config: ServerConfig, publicUrl: PublicUrl): CoreSettings {
  const { issuer } = config.oidc;
  return Object.freeze({
    ...DEFAULT_CORE_SETTINGS,
    heartbeatTimeoutSeconds: config.heartbeatTimeoutSeconds,
    lostJobTimeoutSeconds: config.lostJobTimeoutSeconds,
    heartbeatFlushSeconds: config.heartbeatFlushSeconds,
    workerCredentialCacheSeconds: config.workerAuthCacheSeconds,
    apiTokenCacheSeconds: config.apiTokenAuthCacheSeconds,
    maxStateBytes: config.maxStateBytes,
    stateVersionsKept: config.stateVersionsKept,
    maxExecutionMetadataBytes: config.maxExecutionMetadataBytes,
    maxLogBytesPerJob: config.maxLogBytesPerJob,
    logGraceMinutes: config.logGraceMinutes,
    logRetentionDays: config.logRetentionDays,
    auditRetentionDays: config.auditRetentionDays,
    deletedVineRetentionDays: config.deletedVineRetentionDays,
    pageLimits: config.pageLimits,
    notifications: frozenWithLive(
      {
        ...DEFAULT_NOTIFICATION_SETTINGS,
        allowPrivateUrls: config.notificationsAllowPrivateUrls,
        timeoutSeconds: config.notificationTimeoutSeconds,
        testsPerMinute: config.notificationTestsPerMinute,
      },
      'webUrl',
      () => publicUrl.value,
    ),
    workloadIdentity: frozenWithLive(
      {
        ...DEFAULT_WORKLOAD_IDENTITY_SETTINGS,
        algorithm: config.oidc.algorithm,
        tokenLifetimeSeconds: config.oidc.tokenLifetimeSeconds,
        keyRotationSeconds: config.oidc.keyRotationDays * 86_400,
      },
      'issuer',
      () => issuer ?? publicUrl.value,
    ),
    outbox: Object.freeze({ ...config.outbox }),
    maxManualVcsConnections: config.maxManualVcsConnections,
    tfe: Object.freeze({ ...DEFAULT_TFE_SETTINGS, loginTokenDays: config.tfeLoginTokenDays }),
    mirror: Object.freeze({
      ...DEFAULT_MIRROR_SETTINGS,
      maxArchiveBytes: config.mirrorMaxArchiveMb * 1024 * 1024,
      maxUnpackedBytes: config.mirrorMaxArchiveMb * 4 * 1024 * 1024,
      upstreams: Object.freeze([...config.mirrorUpstream]),
    }),
    registry: Object.freeze({
      ...DEFAULT_REGISTRY_SETTINGS,
      moduleMaxBytes: config.registryModuleMaxBytes,
      providerMaxBytes: config.registryProviderMaxBytes,
    }),
  });
}
