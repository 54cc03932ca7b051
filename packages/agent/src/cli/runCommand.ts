import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TrellisClient } from '@trellis/client';
import { stsAssumeRole } from '../cloud/assumeRole.js';
import { ConfigError, type RunFlags, resolveRunConfig } from '../config/runConfig.js';
import { CredentialsFileError } from '../config/CredentialsFile.js';
import { Agent } from '../daemon/Agent.js';
import { JobRunner } from '../job/JobRunner.js';
import { WarmWorkspaces } from '../job/WarmWorkspaces.js';
import { pluginCacheDir } from '../job/pluginCache.js';
import { AgentLogger } from '../logging/AgentLogger.js';
import type { AgentMetrics } from '../observability/AgentMetrics.js';
import { startAgentTracing, tracedFetch } from '../observability/tracing.js';
import { AGENT_VERSION } from '../version.js';
import type { CliIo } from './main.js';

/** `trellis-agent run`: the daemon until SIGTERM/SIGINT, or one job with `--once`. */
export async function runCommand(flags: RunFlags, io: CliIo): Promise<number> {
  let config: ReturnType<typeof resolveRunConfig>;
  try {
    config = resolveRunConfig(flags, io.env);
  } catch (error) {
    if (error instanceof ConfigError || error instanceof CredentialsFileError) {
      io.stderr(`trellis-agent run: ${error.message}\n`);
      return 3;
    }
    throw error;
  }
  const logger = new AgentLogger(config.logLevel, { worker_id: config.workerId });
  // Node's own warnings (e.g. a library's deprecation notice) go to the structured log too.
  process.removeAllListeners('warning');
  process.on('warning', (warning) => logger.warn('node warning', { warning: warning.message.split('\n')[0] }));
  const temporaryWorkDir = config.workDir === null ? mkdtempSync(join(tmpdir(), 'trellis-agent-')) : null;
  const workDir = config.workDir ?? (temporaryWorkDir as string);
  const client = new TrellisClient({
    baseUrl: config.serverUrl,
    auth: { kind: 'worker', workerId: config.workerId, workerToken: config.workerToken },
    userAgent: `trellis-agent/${AGENT_VERSION}`,
    fetch: tracedFetch,
  });
  const stopTracing = await startAgentTracing(io.env, AGENT_VERSION);
  let runningJobs = () => 0;
  // prom-client is loaded only when metrics are served (issue 31: no idle memory for what is off).
  const metricsModule = config.metricsPort === null ? null : await import('../observability/AgentMetrics.js');
  const metrics = metricsModule && new metricsModule.AgentMetrics(() => runningJobs());
  const metricsServer =
    metricsModule && metrics && (await metricsModule.serveAgentMetrics(metrics.registry, config.metricsPort as number));
  if (metricsServer) logger.info('serving metrics', { url: metricsServer.url });
  // The log bytes the control plane took, counted where the runners send them.
  const runnerClient = metrics ? countingLogBytes(client, metrics) : client;
  const assumeRole = stsAssumeRole();
  // The latest succeeded plan's workspace per vine, for its DEPLOY (issue 31); removed at the end.
  // `--warm-deploys off`: none kept, every DEPLOY downloads its configuration and plan.
  const warm = config.warmDeploys ? new WarmWorkspaces() : null;
  const agent = new Agent({
    client,
    logger,
    concurrency: config.concurrency,
    once: config.once,
    claimWaitS: config.claimWaitS,
    heartbeatIntervalS: config.heartbeatIntervalS,
    ...(metrics ? { metrics } : {}),
    createRunner: (claimed, gate, nextClaim) =>
      new JobRunner(
        {
          client: runnerClient,
          logger,
          assumeRole,
          gate,
          nextClaim,
          ...(warm ? { warm } : {}),
          settings: {
            serverUrl: config.serverUrl,
            workerId: config.workerId,
            workerToken: config.workerToken,
            workDir,
            engineBin: config.engineBin,
            opaBin: config.opaBin,
            graceMs: config.graceMs,
            lockTimeoutS: config.lockTimeoutS,
            allowFileSources: config.allowFileSources,
            providerMirror: config.providerMirror,
            pluginCacheDir: pluginCacheDir(config.pluginCache, workDir),
            concurrency: config.concurrency,
          },
        },
        claimed,
      ),
  });
  runningJobs = () => agent.runningJobs;
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals += 1;
    logger.info('signal received', { signal });
    // A second signal does not wait for the running jobs any more.
    agent.shutdown(signals > 1 ? 'cancel' : config.shutdownMode);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  try {
    const result = await agent.run();
    if (result.reason === 'unauthorized') return 3;
    if (config.once) return result.outcomes.every((outcome) => outcome === 'SUCCESS') ? 0 : 1;
    return 0;
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    warm?.clear();
    metricsServer?.server.close();
    await stopTracing?.();
    if (temporaryWorkDir) rmSync(temporaryWorkDir, { recursive: true, force: true });
  }
}

/** The same client, counting the bytes of each log chunk the control plane took. */
function countingLogBytes(client: TrellisClient, metrics: AgentMetrics): TrellisClient {
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property === 'appendLog') {
        return async (...args: Parameters<TrellisClient['appendLog']>) => {
          const answer = await target.appendLog(...args);
          metrics.logShipped(args[1]);
          return answer;
        };
      }
      if (property === 'appendLogBatch') {
        return async (...args: Parameters<TrellisClient['appendLogBatch']>) => {
          const answer = await target.appendLogBatch(...args);
          // What this request stored: a retry's repeated seqs were skipped, a cut log dropped its tail.
          const firstNew = answer.last_seq - answer.stored;
          for (const chunk of args[1]) {
            if (chunk.seq > firstNew && chunk.seq <= answer.last_seq) metrics.logShipped(chunk.log_chunk);
          }
          return answer;
        };
      }
      return Reflect.get(target, property, receiver);
    },
  });
}
