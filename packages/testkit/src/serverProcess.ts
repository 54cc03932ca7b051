/**
 * The one way tests run the real `trellis-server` binary (server, agent and cli tests): a child
 * process on a free loopback port, started and stopped as an operator would.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The built server binary (`npx tsc -b` first); the same path from testkit's src/ and dist/. */
export const SERVER_BIN = fileURLToPath(new URL('../../server/dist/bin/trellis-server.js', import.meta.url));

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  output(): string;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts the real `trellis-server` binary and waits for its "listening on" line. With
 * `inheritEnv: false` the process sees only PATH and `env`, not the test runner's environment.
 */
export async function startServerProcess(
  env: Record<string, string>,
  options: { inheritEnv?: boolean } = {},
): Promise<ServerProcess> {
  const base = options.inheritEnv === false ? { PATH: process.env.PATH ?? '/usr/bin:/bin' } : process.env;
  const child = spawn(process.execPath, [SERVER_BIN], {
    env: { ...base, PORT: '0', TRELLIS_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (data) => {
    output += data;
  });
  child.stderr?.on('data', (data) => {
    output += data;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    // Only bounds a hang: on a busy two-core machine (load 20) a cold start with its migrations
    // has taken over 30 s.
    const timer = setTimeout(() => reject(new Error(`server did not start within 90 s:\n${output}`)), 90_000);
    const check = () => {
      const match = /listening on (https?:\/\/\S+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout?.on('data', check);
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${output}`));
    });
  });
  return {
    url,
    child,
    output: () => output,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null) return child.exitCode;
      child.kill(signal);
      return exited;
    },
  };
}
