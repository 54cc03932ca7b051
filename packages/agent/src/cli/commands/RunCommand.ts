import { Command, Option } from 'clipanion';
import { runCommand } from '../runCommand.js';
import { AgentCommand } from './AgentCommand.js';

/** `trellis-agent run`: the daemon. */
export class RunCommand extends AgentCommand {
  static override paths = [['run']];

  static override usage = Command.Usage({
    description: 'Heartbeat, claim jobs and run them until SIGTERM or SIGINT',
    details: `
      The daemon. Credentials come from the flags, else \`TRELLIS_URL\`, \`TRELLIS_WORKER_ID\` and \`TRELLIS_WORKER_TOKEN\`, else the credentials file written by \`register\`. Every flag has an environment variable (named in its description); a flag wins over its variable.

      On SIGTERM or SIGINT the agent stops claiming and lets running jobs finish (\`--on-shutdown cancel\` interrupts them); a second signal cancels them.

      Exit codes: 0 stopped cleanly (or \`--once\`: no job, or the job succeeded); 1 \`--once\`: the job failed, was cancelled or lost; 2 usage error; 3 configuration or credentials refused.
    `,
    examples: [
      ['Run with the credentials of `register`', '$0 run'],
      ['Run one job at most, then exit (CI)', '$0 run --once --claim-wait 30'],
      ['Run two jobs at once with Terraform', '$0 run --concurrency 2 --engine-bin terraform'],
      [
        'Run from the environment only (containers)',
        'TRELLIS_URL=https://trellis.example.com TRELLIS_WORKER_ID=… TRELLIS_WORKER_TOKEN=… $0 run',
      ],
    ],
  });

  url = Option.String('--url', { description: "TRELLIS_URL (else the credentials file's)" });
  workerId = Option.String('--worker-id', { description: "TRELLIS_WORKER_ID (else the credentials file's)" });
  workerToken = Option.String('--worker-token', {
    description: "TRELLIS_WORKER_TOKEN (else the credentials file's; prefer the environment variable)",
  });
  credentialsFile = Option.String('--credentials-file', {
    description: 'Where `register` wrote them (TRELLIS_AGENT_CREDENTIALS, default ~/.config/trellis/agent.json)',
  });
  engineBin = Option.String('--engine-bin', {
    description: 'TRELLIS_ENGINE_BIN; default tofu or terraform (per job) from PATH',
  });
  opaBin = Option.String('--opa-bin', {
    description:
      'TRELLIS_OPA_BIN; the Open Policy Agent binary that checks plans against policies (default opa from PATH)',
  });
  concurrency = Option.String('--concurrency', { description: 'TRELLIS_AGENT_CONCURRENCY; jobs at once (default 1)' });
  workDir = Option.String('--work-dir', {
    description: 'TRELLIS_AGENT_WORK_DIR; job workspaces (default a temporary directory)',
  });
  once = Option.Boolean('--once', false, { description: 'Claim and run at most one job, then exit (for CI)' });
  claimWait = Option.String('--claim-wait', { description: 'Seconds one claim long-polls, 0-30 (default 30)' });
  heartbeatInterval = Option.String('--heartbeat-interval', {
    description: 'TRELLIS_AGENT_HEARTBEAT_INTERVAL_S (default: as the server says, 30)',
  });
  cancelGrace = Option.String('--cancel-grace', {
    description: 'TRELLIS_AGENT_CANCEL_GRACE_S; seconds from SIGINT to SIGKILL of the engine (default 60)',
  });
  lockTimeout = Option.String('--lock-timeout', {
    description: 'TRELLIS_AGENT_LOCK_TIMEOUT_S; seconds to wait for a held state lock (default 120)',
  });
  onShutdown = Option.String('--on-shutdown', {
    description: 'TRELLIS_AGENT_ON_SHUTDOWN; finish or cancel running jobs on SIGTERM (default finish)',
  });
  logLevel = Option.String('--log-level', {
    description: 'TRELLIS_AGENT_LOG_LEVEL: debug, info, warn, error, silent',
  });
  allowFileSources = Option.Boolean('--allow-file-sources', false, {
    description: 'TRELLIS_ALLOW_FILE_SOURCES=1; clone file:// git sources, paths on this host (default: refused)',
  });

  metricsPort = Option.String('--metrics-port', {
    description: 'TRELLIS_AGENT_METRICS_PORT; serve GET /metrics (Prometheus) on this port (default: not served)',
  });

  providerMirror = Option.String('--provider-mirror', {
    description:
      "TRELLIS_AGENT_PROVIDER_MIRROR; auto: jobs install the providers their owner's mirror holds from it (default), off: never",
  });

  pluginCache = Option.String('--plugin-cache', {
    description:
      "TRELLIS_AGENT_PLUGIN_CACHE; where jobs' providers are downloaded once: auto (plugin-cache in the work dir, default), off, or a directory",
  });

  warmDeploys = Option.String('--warm-deploys', {
    description:
      "TRELLIS_AGENT_WARM_DEPLOYS; on: a DEPLOY of a plan this agent made reuses the plan's workspace (no download, no init; default), off: every DEPLOY starts fresh",
  });

  override execute(): Promise<number> {
    return runCommand(
      {
        url: this.url,
        'worker-id': this.workerId,
        'worker-token': this.workerToken,
        'credentials-file': this.credentialsFile,
        'engine-bin': this.engineBin,
        'opa-bin': this.opaBin,
        concurrency: this.concurrency,
        'work-dir': this.workDir,
        once: this.once,
        'claim-wait': this.claimWait,
        'heartbeat-interval': this.heartbeatInterval,
        'cancel-grace': this.cancelGrace,
        'lock-timeout': this.lockTimeout,
        'on-shutdown': this.onShutdown,
        'log-level': this.logLevel,
        'allow-file-sources': this.allowFileSources,
        'metrics-port': this.metricsPort,
        'provider-mirror': this.providerMirror,
        'plugin-cache': this.pluginCache,
        'warm-deploys': this.warmDeploys,
      },
      this.io,
    );
  }
}
