import type { ShutdownMode } from '../daemon/Agent.js';
import { PROVIDER_MIRROR_MODES, type ProviderMirrorMode } from '../job/cliConfig.js';
import { type PluginCacheSetting, parsePluginCache } from '../job/pluginCache.js';
import { type LogLevel, parseLogLevel } from '../logging/AgentLogger.js';
import { type AgentCredentials, CredentialsFile, defaultCredentialsPath } from './CredentialsFile.js';

/** Flags of `trellis-agent run`, as parsed (strings until checked here). */
export interface RunFlags {
  url?: string | undefined;
  'worker-id'?: string | undefined;
  'worker-token'?: string | undefined;
  'credentials-file'?: string | undefined;
  'engine-bin'?: string | undefined;
  'opa-bin'?: string | undefined;
  concurrency?: string | undefined;
  'work-dir'?: string | undefined;
  once?: boolean | undefined;
  'claim-wait'?: string | undefined;
  'heartbeat-interval'?: string | undefined;
  'cancel-grace'?: string | undefined;
  'lock-timeout'?: string | undefined;
  'on-shutdown'?: string | undefined;
  'log-level'?: string | undefined;
  'allow-file-sources'?: boolean | undefined;
  'metrics-port'?: string | undefined;
  'provider-mirror'?: string | undefined;
  'plugin-cache'?: string | undefined;
  'warm-deploys'?: string | undefined;
}

export interface RunConfig {
  serverUrl: string;
  workerId: string;
  workerToken: string;
  engineBin: string | undefined;
  /** Evaluates plan policies (issue 15); undefined: `opa` from PATH. */
  opaBin: string | undefined;
  concurrency: number;
  /** null: a temporary directory made at start and removed at exit. */
  workDir: string | null;
  once: boolean;
  claimWaitS: number;
  heartbeatIntervalS: number | null;
  graceMs: number;
  lockTimeoutS: number;
  shutdownMode: ShutdownMode;
  logLevel: LogLevel | 'silent';
  /** Clone `file://` git sources (paths on this host); refused unless asked for. */
  allowFileSources: boolean;
  /** `--metrics-port` / `TRELLIS_AGENT_METRICS_PORT`: serve `GET /metrics` there; null: not served. */
  metricsPort: number | null;
  /** `--provider-mirror` / `TRELLIS_AGENT_PROVIDER_MIRROR`: `auto` (default) or `off` (docs/registry.md). */
  providerMirror: ProviderMirrorMode;
  /** `--plugin-cache` / `TRELLIS_AGENT_PLUGIN_CACHE`: where jobs' providers are cached (docs/agent.md). */
  pluginCache: PluginCacheSetting;
  /**
   * `--warm-deploys` / `TRELLIS_AGENT_WARM_DEPLOYS`: keep a succeeded plan's workspace for its
   * DEPLOY on this agent (`on`, default) or run every DEPLOY from a fresh download (`off`).
   */
  warmDeploys: boolean;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

function integer(value: string | undefined, name: string, fallback: number, min: number, max: number): number {
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < min || parsed > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max} (got "${value}")`);
  }
  return parsed;
}

function isTrue(value: string | undefined): boolean {
  return value === '1' || value?.toLowerCase() === 'true';
}

/** Flags first, then environment variables, then the credentials file of `trellis-agent register`. */
export function resolveRunConfig(flags: RunFlags, env: NodeJS.ProcessEnv): RunConfig {
  let workerId = flags['worker-id'] ?? env.TRELLIS_WORKER_ID;
  let workerToken = flags['worker-token'] ?? env.TRELLIS_WORKER_TOKEN;
  let serverUrl = flags.url ?? env.TRELLIS_URL;
  if (!workerId || !workerToken || !serverUrl) {
    const path = flags['credentials-file'] ?? defaultCredentialsPath(env);
    const stored: AgentCredentials | null = new CredentialsFile(path).read();
    if (stored) {
      workerId ||= stored.worker_id;
      workerToken ||= stored.worker_token;
      serverUrl ||= stored.server;
    }
    if (!workerId || !workerToken) {
      throw new ConfigError(
        `no worker credentials: run \`trellis-agent register --name <name>\` (writes ${path}) or set TRELLIS_WORKER_ID and TRELLIS_WORKER_TOKEN`,
      );
    }
  }
  if (!serverUrl) throw new ConfigError('no control plane address: pass --url or set TRELLIS_URL');
  if (!URL.canParse(serverUrl)) throw new ConfigError(`the control plane address "${serverUrl}" is not a URL`);
  const shutdownMode = flags['on-shutdown'] ?? env.TRELLIS_AGENT_ON_SHUTDOWN ?? 'finish';
  if (shutdownMode !== 'finish' && shutdownMode !== 'cancel') {
    throw new ConfigError(`--on-shutdown must be "finish" or "cancel" (got "${shutdownMode}")`);
  }
  const heartbeat = flags['heartbeat-interval'] ?? env.TRELLIS_AGENT_HEARTBEAT_INTERVAL_S;
  const metricsPort = flags['metrics-port'] ?? env.TRELLIS_AGENT_METRICS_PORT;
  let logLevel: LogLevel | 'silent';
  try {
    logLevel = parseLogLevel(flags['log-level'] ?? env.TRELLIS_AGENT_LOG_LEVEL);
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  const providerMirror = flags['provider-mirror'] ?? (env.TRELLIS_AGENT_PROVIDER_MIRROR || 'auto');
  if (!(PROVIDER_MIRROR_MODES as readonly string[]).includes(providerMirror)) {
    throw new ConfigError(`--provider-mirror must be "auto" or "off" (got "${providerMirror}")`);
  }
  const pluginCacheValue = flags['plugin-cache'] ?? (env.TRELLIS_AGENT_PLUGIN_CACHE || 'auto');
  const pluginCache = parsePluginCache(pluginCacheValue);
  if (pluginCache === null) {
    throw new ConfigError(`--plugin-cache must be "auto", "off" or an absolute directory (got "${pluginCacheValue}")`);
  }
  const warmDeploys = flags['warm-deploys'] ?? (env.TRELLIS_AGENT_WARM_DEPLOYS || 'on');
  if (warmDeploys !== 'on' && warmDeploys !== 'off') {
    throw new ConfigError(`--warm-deploys must be "on" or "off" (got "${warmDeploys}")`);
  }
  return {
    serverUrl: serverUrl.replace(/\/+$/, ''),
    workerId,
    workerToken,
    engineBin: flags['engine-bin'] ?? (env.TRELLIS_ENGINE_BIN || undefined),
    opaBin: flags['opa-bin'] ?? (env.TRELLIS_OPA_BIN || undefined),
    concurrency: integer(flags.concurrency ?? env.TRELLIS_AGENT_CONCURRENCY, 'concurrency', 1, 1, 64),
    workDir: flags['work-dir'] ?? (env.TRELLIS_AGENT_WORK_DIR || null),
    once: flags.once === true,
    claimWaitS: integer(flags['claim-wait'], 'claim wait', 30, 0, 30),
    heartbeatIntervalS: heartbeat ? integer(heartbeat, 'heartbeat interval', 30, 1, 3600) : null,
    graceMs: integer(flags['cancel-grace'] ?? env.TRELLIS_AGENT_CANCEL_GRACE_S, 'cancel grace', 60, 0, 3600) * 1000,
    lockTimeoutS: integer(flags['lock-timeout'] ?? env.TRELLIS_AGENT_LOCK_TIMEOUT_S, 'lock timeout', 120, 0, 3600),
    shutdownMode,
    logLevel,
    allowFileSources: flags['allow-file-sources'] === true || isTrue(env.TRELLIS_ALLOW_FILE_SOURCES),
    metricsPort: metricsPort ? integer(metricsPort, 'metrics port', 0, 0, 65_535) : null,
    providerMirror: providerMirror as ProviderMirrorMode,
    pluginCache,
    warmDeploys: warmDeploys === 'on',
  };
}
