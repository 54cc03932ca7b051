import { execFile } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, isAbsolute, join } from 'node:path';
import type { PolicyCheck, PolicyCompiler } from '@trellis/core';

const CHECK_TIMEOUT_MS = 20_000;

/**
 * Checks policy modules with the Open Policy Agent binary (issue 15): `opa check` compiles the
 * module (parse errors, unsafe variables, type errors), `opa parse --format json` names its
 * package and rules. The module goes through a temporary file (0600, removed after); `opa` runs
 * with `execFile`, no shell, a bare environment. Without a binary every check is `unavailable`
 * and the agents report compile errors instead.
 */
export class OpaPolicyCompiler implements PolicyCompiler {
  constructor(readonly bin: string | null) {}

  async check(module: string): Promise<PolicyCheck> {
    if (this.bin === null) return { status: 'unavailable' };
    const dir = mkdtempSync(join(tmpdir(), 'trellis-policy-'));
    try {
      writeFileSync(join(dir, 'policy.rego'), module, { mode: 0o600 });
      const checked = await run(this.bin, ['check', 'policy.rego'], dir);
      if (checked.code !== 0) return { status: 'invalid', message: engineMessage(checked, dir) };
      const parsed = await run(this.bin, ['parse', '--format', 'json', 'policy.rego'], dir);
      if (parsed.code !== 0) return { status: 'invalid', message: engineMessage(parsed, dir) };
      return { status: 'ok', ...namesOf(JSON.parse(parsed.stdout)) };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

/** `TRELLIS_OPA_BIN` (a path or a name on PATH), else `opa` on PATH; null when there is none. */
export function findOpaBin(env: Record<string, string | undefined> = process.env): string | null {
  const name = env.TRELLIS_OPA_BIN || 'opa';
  if (isAbsolute(name) || name.includes('/')) return name;
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // not here
    }
  }
  return null;
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(bin: string, args: string[], cwd: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(
      bin,
      args,
      {
        cwd,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd },
        timeout: CHECK_TIMEOUT_MS,
        encoding: 'utf8',
      },
      (error, stdout, stderr) => {
        if (error && typeof (error as NodeJS.ErrnoException).code === 'string') {
          reject(new Error(`the policy engine ${bin} could not be started: ${error.message}`));
          return;
        }
        if (error?.killed) {
          reject(new Error(`the policy engine did not answer within ${CHECK_TIMEOUT_MS / 1000} s`));
          return;
        }
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

/** What opa printed, without the temporary directory. */
function engineMessage(result: Run, dir: string): string {
  const text = `${result.stderr}\n${result.stdout}`.trim();
  return (text === '' ? `opa exited with ${result.code}` : text).split(`${dir}/`).join('');
}

/** The package (dotted) and rule names of `opa parse --format json`. */
function namesOf(ast: unknown): { package: string; rules: string[] } {
  const tree = ast as {
    package?: { path?: { value?: unknown }[] };
    rules?: { head?: { name?: unknown; ref?: { value?: unknown }[] } }[];
  };
  const pkg = (tree.package?.path ?? [])
    .slice(1)
    .map((term) => String(term.value))
    .join('.');
  const rules = new Set<string>();
  for (const rule of tree.rules ?? []) {
    const name = rule.head?.name ?? rule.head?.ref?.[0]?.value;
    if (typeof name === 'string') rules.add(name);
  }
  return { package: pkg, rules: [...rules] };
}
