import { spawn } from 'node:child_process';

/** What a finished process printed, and how it ended. */
export interface ProcessResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunProcessOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Written to its standard input, which is then closed (closed at once without it). */
  input?: string;
  /** Killed (SIGKILL) and the promise rejected with what it printed, after this long; none by default. */
  timeoutMs?: number;
}

/** Runs `file` with `args` to its end, collecting what it prints. */
export function runProcess(
  file: string,
  args: readonly string[],
  options: RunProcessOptions = {},
): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env: options.env ?? process.env, cwd: options.cwd, stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (data) => {
      stdout += data;
    });
    child.stderr.on('data', (data) => {
      stderr += data;
    });
    const timer =
      options.timeoutMs === undefined
        ? null
        : setTimeout(() => {
            child.kill('SIGKILL');
            reject(new Error(`${file} ${args.join(' ')} did not finish\nstdout: ${stdout}\nstderr: ${stderr}`));
          }, options.timeoutMs);
    child.on('error', (error) => {
      if (timer) clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      if (timer) clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}
