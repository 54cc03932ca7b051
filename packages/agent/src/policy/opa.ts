import { execFile } from 'node:child_process';
import { isAbsolute } from 'node:path';
import { findOnPath } from '../engine/Engine.js';

/** What one run of the `opa` binary printed. */
export interface OpaRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Stops an evaluation that takes longer than this (a runaway module). */
const OPA_TIMEOUT_MS = 60_000;
const OPA_MAX_BUFFER = 16 * 1024 * 1024;

/**
 * Runs `opa` with these arguments (no shell), in `cwd`, with a bare environment: the plan and the
 * modules are files of the workspace, never arguments or environment.
 */
export function runOpa(bin: string, args: string[], cwd: string): Promise<OpaRun> {
  return new Promise((resolve, reject) => {
    execFile(
      bin,
      args,
      {
        cwd,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd },
        timeout: OPA_TIMEOUT_MS,
        maxBuffer: OPA_MAX_BUFFER,
        encoding: 'utf8',
      },
      (error, stdout, stderr) => {
        if (error && typeof (error as NodeJS.ErrnoException).code === 'string') {
          reject(error);
          return;
        }
        if (error?.killed) {
          reject(new Error(`opa did not finish within ${OPA_TIMEOUT_MS / 1000} s`));
          return;
        }
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

/**
 * The OPA binary of this agent: `--opa-bin` / `TRELLIS_OPA_BIN` (a path or a name on PATH), else
 * `opa` on PATH; null when there is none.
 */
export function resolveOpaBin(configured: string | undefined, path = process.env.PATH ?? ''): string | null {
  const name = configured && configured !== '' ? configured : 'opa';
  if (isAbsolute(name) || name.includes('/')) return name;
  return findOnPath(name, path);
}

/** The engine's message without the temporary directory it names files by. */
export function opaMessage(run: OpaRun, dir: string): string {
  const text = `${run.stderr}\n${run.stdout}`.trim();
  return (text === '' ? `opa exited with ${run.code}` : text).split(`${dir}/`).join('');
}

/** A Rego reference to `data.<package>.deny` that holds for any package path (quoted parts). */
export function denyRef(packagePath: string[]): string {
  return `data${packagePath.map((part) => `[${JSON.stringify(part)}]`).join('')}.deny`;
}

/**
 * The package path of a module as `opa parse --format json` prints it (`package.path` is
 * `data` followed by string terms).
 */
export function packagePathOf(ast: unknown): string[] | null {
  const pkg = (ast as { package?: { path?: { type?: string; value?: unknown }[] } } | null)?.package;
  if (!pkg || !Array.isArray(pkg.path)) return null;
  const parts = pkg.path.slice(1).map((term) => (typeof term.value === 'string' ? term.value : null));
  return parts.every((part): part is string => part !== null) ? parts : null;
}
