import { type BaseContext, Builtins, Cli, type Command } from 'clipanion';
import { COMMANDS } from './commands/index.js';
import { TrellisCommand } from './commands/TrellisCommand.js';
import { ExitCode } from './exitCodes.js';
import { colourEnabled, Terminal } from './output/Terminal.js';
import { CLI_VERSION } from './version.js';

/** clipanion shows an option's value as `#0`; `--server SERVER` reads better. */
function nameValues(text: string): string {
  return text.replace(
    /(--([a-z][\w-]*)(?:,-[A-Za-z])?) #0/g,
    (_match, flag: string, name: string) => `${flag} ${name.toUpperCase()}`,
  );
}

/**
 * clipanion's messages for a flag value its validator refused, in words: `--limit must be from 1
 * to 200` rather than `expected to be in the [1; 200] range`, values without quotes and "or".
 */
export function humanUsageMessage(text: string): string {
  return text
    .replace(
      /Invalid value for (\S+): expected to be in the \[(-?\d+); (-?\d+)\] range/g,
      (_match, flag: string, low: string, high: string) => `${named(flag)} must be from ${low} to ${high}`,
    )
    .replace(/Invalid value for (\S+): expected one of ([^(]+?) \(got/g, (_match, flag: string, values: string) => {
      const list = values.replace(/"/g, '').replace(/,? or /, ', ');
      return `${named(flag)} must be one of ${list} (got`;
    })
    .replace(
      /Invalid value for (\S+): expected (an? [a-z ]+?) \(got/g,
      (_match, flag: string, kind: string) => `${named(flag)} must be ${kind} (got`,
    );
}

/** A flag as typed; a positional argument (clipanion names it `github|gitlab|bitbucket`) as "the argument". */
function named(flag: string): string {
  return flag.startsWith('-') ? flag : 'the argument';
}

class TrellisCli extends Cli {
  protected override getUsageByIndex(...args: Parameters<Cli['getUsageByIndex']>): ReturnType<Cli['getUsageByIndex']> {
    const { usage, options } = super.getUsageByIndex(...args);
    return {
      usage: nameValues(usage),
      options: options.map((option) => ({ ...option, definition: nameValues(option.definition) })),
    };
  }
}

export function createCli(context: BaseContext): Cli {
  const cli = new TrellisCli({
    binaryLabel: 'Trellis',
    binaryName: 'trellis',
    binaryVersion: CLI_VERSION,
    enableColors: colourEnabled(context.stdout, context.env),
  });
  for (const command of COMMANDS) cli.register(command);
  cli.register(Builtins.VersionCommand);
  return cli;
}

/**
 * Runs `trellis` with these arguments and returns the exit code. Usage mistakes go to stderr with
 * the command's usage (exit 2); any other failure is one line on stderr (see `exitCodes.ts`).
 */
export async function runCli(argv: string[], context: Partial<BaseContext> = {}): Promise<number> {
  const full: BaseContext = { ...Cli.defaultContext, ...context };
  const colored = colourEnabled(full.stderr, full.env);
  const cli = createCli(full);
  const args = argv.length === 0 || (argv.length === 1 && (argv[0] === '--help' || argv[0] === '-h')) ? ['help'] : argv;

  let command: Command;
  try {
    command = cli.process(args, full);
  } catch (error) {
    full.stderr.write(humanUsageMessage(nameValues(cli.error(error as Error, { colored }))));
    return ExitCode.USAGE;
  }
  const code = await cli.run(command, full);
  if (command instanceof TrellisCommand && command.failure) {
    const { failure } = command;
    if (failure.showUsage)
      full.stderr.write(humanUsageMessage(cli.error(failure.error as Error, { colored, command })));
    else new Terminal({ ...full, env: full.env }).error(failure.message);
    if (full.env.TRELLIS_DEBUG && failure.error instanceof Error) full.stderr.write(`${failure.error.stack}\n`);
    return failure.exitCode;
  }
  return code;
}
