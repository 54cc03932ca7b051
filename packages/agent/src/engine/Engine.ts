import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import type { EngineName } from '@trellis/core';
import { agentDiskFull, JobFailure, JobInterrupted } from '../job/errors.js';
import type { JobLog } from '../logs/JobLog.js';
import { EngineProcess } from './EngineProcess.js';

export interface EngineOptions {
  bin: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  log: JobLog;
  graceMs: number;
  /** How long plan/apply/destroy wait for a state lock another run still holds. */
  lockTimeoutS: number;
  /** The job's variables (`writeVariablesFiles`), given to every command that evaluates the configuration. */
  varFiles?: readonly string[];
  /** Awaited before each command starts (the agent's fence: no command starts while it is fenced). */
  beforeCommand?: (command: string) => Promise<void>;
}

/** Flags every command gets: no prompts, no colour codes in the log. */
const AUTOMATION = ['-input=false', '-no-color'];

/**
 * The OpenTofu/Terraform commands of a job, run one after another in the job's workspace. After
 * `interrupt()` the running command gets SIGINT and no further command starts; after
 * `stopAfterCurrent()` the running command goes on to its end and no further command starts.
 */
export class Engine {
  private current: EngineProcess | null = null;
  private currentCommand: string | null = null;
  private interrupted = false;
  private noFurtherCommand = false;

  constructor(private readonly options: EngineOptions) {}

  init(extra: string[] = []): Promise<void> {
    return this.run(['init', ...AUTOMATION, ...extra]);
  }

  plan(out: string, extra: string[] = []): Promise<void> {
    return this.run(['plan', ...AUTOMATION, this.lockTimeout(), ...this.variables(), `-out=${out}`, ...extra]);
  }

  apply(planFile: string): Promise<void> {
    return this.run(['apply', ...AUTOMATION, this.lockTimeout(), '-auto-approve', planFile]);
  }

  destroy(): Promise<void> {
    return this.run(['destroy', ...AUTOMATION, this.lockTimeout(), ...this.variables(), '-auto-approve']);
  }

  /** `show -json <plan>`, kept out of the log (it holds variable values). */
  async showPlanJson(planFile: string): Promise<unknown> {
    return parseJsonOutput(await this.capture(['show', '-json', '-no-color', planFile]));
  }

  /** `output -json`, kept out of the log (it holds sensitive outputs in clear). */
  async outputsJson(): Promise<unknown> {
    return parseJsonOutput(await this.capture(['output', '-json', '-no-color']));
  }

  interrupt(): void {
    this.interrupted = true;
    this.current?.interrupt();
  }

  /** Lets the running command end on its own; none starts after it. */
  stopAfterCurrent(): void {
    this.noFurtherCommand = true;
  }

  /** The command running now (`apply`, `plan`…), or null between commands. */
  get running(): string | null {
    return this.currentCommand;
  }

  /** A saved plan carries its variables: `apply <plan>` takes none (the engine refuses them). */
  private variables(): string[] {
    return (this.options.varFiles ?? []).map((file) => `-var-file=${file}`);
  }

  private lockTimeout(): string {
    return `-lock-timeout=${this.options.lockTimeoutS}s`;
  }

  private async capture(args: string[]): Promise<string> {
    return (await this.start(args, true)).stdout;
  }

  private async run(args: string[]): Promise<void> {
    await this.start(args, false);
  }

  private async start(args: string[], captureStdout: boolean) {
    if (!this.interrupted && !this.noFurtherCommand) await this.options.beforeCommand?.(args[0] as string);
    if (this.interrupted || this.noFurtherCommand) throw new JobInterrupted('interrupted before `' + args[0] + '`');
    const { log } = this.options;
    log.system(`$ ${engineLabel(this.options.bin)} ${args.map(maskBackendConfig).join(' ')}`);
    const engineProcess = new EngineProcess({
      bin: this.options.bin,
      args,
      cwd: this.options.cwd,
      env: this.options.env,
      sink: log,
      captureStdout,
      graceMs: this.options.graceMs,
    });
    this.current = engineProcess;
    this.currentCommand = args[0] as string;
    let exit: Awaited<ReturnType<EngineProcess['wait']>>;
    try {
      exit = await engineProcess.wait();
    } catch (error) {
      throw new JobFailure(`could not start the engine ${this.options.bin}: ${(error as Error).message}`);
    } finally {
      this.current = null;
      this.currentCommand = null;
      log.endStreams();
    }
    if (exit.interrupted || this.interrupted) {
      log.system(
        exit.killed
          ? `the engine did not stop within the grace period and was killed`
          : `the engine stopped after the interrupt (exit ${exit.code ?? exit.signal})`,
      );
      throw new JobInterrupted(`${args[0]} interrupted`);
    }
    if (exit.code !== 0) {
      const reason = log.firstError ?? `${args[0]} exited with ${exit.code ?? `signal ${exit.signal}`}`;
      // The engine's own words name what failed; a full disk is said first, being the thing to fix.
      if (log.sawDiskFull) throw agentDiskFull(`\`${args[0]}\` could not write (no space left on device): ${reason}`);
      if (log.sawStorageFull) {
        throw new JobFailure(
          `the control plane's artifact storage is full: the engine's state write was refused (507 insufficient_storage): ${reason}; nothing stored before is lost; once space is freed, run the job again`,
        );
      }
      throw new JobFailure(reason);
    }
    return exit;
  }
}

/**
 * The JSON document of a `-json` command. The engine may print warnings first on the same stream
 * (e.g. about its CLI configuration file), so the document starts at the first line that opens one.
 */
export function parseJsonOutput(text: string): unknown {
  const start = text.search(/^[{[]/m);
  if (start < 0) {
    if (text.trim() === '') return {};
    throw new JobFailure(`the engine printed no JSON where it was expected: ${text.trim().split('\n')[0]}`);
  }
  try {
    return JSON.parse(text.slice(start));
  } catch {
    throw new JobFailure('the engine printed JSON that cannot be read');
  }
}

/** `-backend-config=key=value` may carry credentials: the log shows the key only. */
function maskBackendConfig(arg: string): string {
  const match = /^(-backend-config=[^=]+=)/.exec(arg);
  return match ? `${match[1]}***` : arg;
}

function engineLabel(bin: string): string {
  return bin.split('/').pop() ?? bin;
}

/** Found on PATH, or null. */
export function findOnPath(name: string, path = process.env.PATH ?? ''): string | null {
  for (const dir of path.split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * The engine binary for a job: the configured one (`--engine-bin`, `TRELLIS_ENGINE_BIN`: a path or
 * a name on PATH), else `tofu` or `terraform` as the snapshot asks, found on PATH.
 */
export function resolveEngineBin(configured: string | undefined, wanted: EngineName | undefined): string {
  const name = configured && configured !== '' ? configured : (wanted ?? 'tofu');
  if (isAbsolute(name) || name.includes('/')) return name;
  const found = findOnPath(name);
  if (!found) {
    throw new JobFailure(
      `the engine "${name}" is not on this agent's PATH; install it or set TRELLIS_ENGINE_BIN / --engine-bin`,
    );
  }
  return found;
}
