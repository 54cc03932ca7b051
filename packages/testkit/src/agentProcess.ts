/**
 * The one way tests run the real `trellis-agent run` process (agent end-to-end, fault and web
 * journey tests): a child process polling the control plane at `url` with a registered agent's
 * credentials, running jobs with `engineBin` (the pinned OpenTofu of `requirePeer('tofu')`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The built agent binary (`npx tsc -b` first); the same path from testkit's src/ and dist/. */
export const AGENT_BIN = fileURLToPath(new URL('../../agent/dist/bin/trellis-agent.js', import.meta.url));

export interface AgentCredentials {
  workerId: string;
  workerToken: string;
}

export interface AgentProcess extends AgentCredentials {
  workDir: string;
  child: ChildProcess;
  /** The agent's own JSON log lines (stderr) and whatever it printed. */
  output(): string;
  exited: Promise<number | null>;
  /** Sends the signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface AgentProcessOptions {
  /** Where it runs its jobs (the caller creates and removes it). */
  workDir: string;
  /** The engine binary (`TRELLIS_ENGINE_BIN`). */
  engineBin: string;
  /** More `trellis-agent run` flags. */
  args?: string[];
  /** More environment on top of the test's and the agent's own. */
  env?: Record<string, string>;
}

/**
 * Starts `trellis-agent run` against `url`, heartbeating every second and long-polling for a job
 * for up to 5 s at a time, with debug logs.
 */
export function startAgentProcess(
  url: string,
  credentials: AgentCredentials,
  options: AgentProcessOptions,
): AgentProcess {
  const child = spawn(
    process.execPath,
    [
      AGENT_BIN,
      'run',
      '--work-dir',
      options.workDir,
      '--heartbeat-interval',
      '1',
      '--claim-wait',
      '5',
      ...(options.args ?? []),
    ],
    {
      env: {
        ...process.env,
        TRELLIS_URL: url,
        TRELLIS_WORKER_ID: credentials.workerId,
        TRELLIS_WORKER_TOKEN: credentials.workerToken,
        TRELLIS_ENGINE_BIN: options.engineBin,
        TRELLIS_AGENT_LOG_LEVEL: 'debug',
        ...options.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout?.on('data', (data) => {
    output += data;
  });
  child.stderr?.on('data', (data) => {
    output += data;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    ...credentials,
    workDir: options.workDir,
    child,
    output: () => output,
    exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
