import { spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, isAbsolute, join } from 'node:path';
import { type PolicyCheck, type PolicyCompiler, RateLimitedError } from '@trellis/core';

const CHECK_TIMEOUT_MS = 20_000;
/**
 * What `opa` may print before it is stopped. `opa parse --format json` prints the module's syntax
 * tree, indented: some 45 bytes a byte of Rego (a 37 KiB module gave 1.6 MB, past Node's 1 MiB
 * `maxBuffer`), so the largest module (64 KiB) stays far below this.
 */
const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

/** How many modules are checked at once, and how many more may wait for a turn (issue 23). */
export interface PolicyCheckLimits {
  concurrency: number;
  queue: number;
}

export const DEFAULT_POLICY_CHECK_LIMITS: PolicyCheckLimits = { concurrency: 2, queue: 8 };

/**
 * Checks policy modules with the Open Policy Agent binary (issue 15): `opa check` compiles the
 * module (parse errors, unsafe variables, type errors), `opa parse --format json` names its
 * package and rules. The module goes through a temporary file (0600, removed after); `opa` runs
 * without a shell, in a bare environment, its output read as it comes (up to 64 MiB). Without a
 * binary every check is `unavailable` and the agents report compile errors instead.
 *
 * Each check runs two processes, so checks are bounded (issue 23): `limits.concurrency` at once,
 * `limits.queue` more waiting their turn, and any further one is refused at once with
 * `429 policy_checks_busy` (`Retry-After`), never left to pile up processes.
 */
export class OpaPolicyCompiler implements PolicyCompiler {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    readonly bin: string | null,
    private readonly limits: PolicyCheckLimits = DEFAULT_POLICY_CHECK_LIMITS,
  ) {}

  async check(module: string): Promise<PolicyCheck> {
    const bin = this.bin;
    if (bin === null) return { status: 'unavailable' };
    await this.turn();
    try {
      return await checkWith(bin, module);
    } finally {
      this.done();
    }
  }

  /** Waits for a turn among `concurrency` checks; refused when `queue` already wait. */
  private async turn(): Promise<void> {
    if (this.running < this.limits.concurrency) {
      this.running += 1;
      return;
    }
    if (this.waiting.length >= this.limits.queue) {
      throw new RateLimitedError(
        'the server is checking as many policy modules as it may at once; retry in a moment',
        1,
        'policy_checks_busy',
      );
    }
    // The finishing check hands its turn over (running stays as it is).
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  private done(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running -= 1;
  }
}

async function checkWith(bin: string, module: string): Promise<PolicyCheck> {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-policy-'));
  try {
    writeFileSync(join(dir, 'policy.rego'), module, { mode: 0o600 });
    const checked = await run(bin, ['check', 'policy.rego'], dir);
    if (checked.code !== 0) return { status: 'invalid', message: engineMessage(checked, dir) };
    const parsed = await run(bin, ['parse', '--format', 'json', '--json-include=-comments', 'policy.rego'], dir);
    if (parsed.code !== 0) return { status: 'invalid', message: engineMessage(parsed, dir) };
    return { status: 'ok', ...namesOf(JSON.parse(parsed.stdout)) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
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
    const child = spawn(bin, args, {
      cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let bytes = 0;
    let failure: Error | null = null;
    const stop = (error: Error) => {
      failure ??= error;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(
      () => stop(new Error(`the policy engine did not answer within ${CHECK_TIMEOUT_MS / 1000} s`)),
      CHECK_TIMEOUT_MS,
    );
    const collect = (into: Buffer[]) => (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > MAX_OUTPUT_BYTES) stop(new Error(`the policy engine printed more than ${MAX_OUTPUT_BYTES} bytes`));
      else into.push(chunk);
    };
    child.stdout.on('data', collect(stdout));
    child.stderr.on('data', collect(stderr));
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`the policy engine ${bin} could not be started: ${error.message}`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (failure) reject(failure);
      else
        resolve({
          code: code ?? 1,
          stdout: Buffer.concat(stdout).toString('utf8'),
          stderr: Buffer.concat(stderr).toString('utf8'),
        });
    });
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
