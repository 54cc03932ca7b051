import { type BaseContext, Builtins, Cli, type Command } from 'clipanion';
import { COMMANDS } from './commands/index.js';
import { TrellisCommand } from './commands/TrellisCommand.js';
import { ExitCode } from './exitCodes.js';
import { colourEnabled, Terminal } from './output/Terminal.js';
import { CLI_VERSION } from './version.js';

/** clipanion shows an option's value as `#0`; `--server SERVER` reads better. */
function nameValues(text: string): string {
  return text.replace(/(--([a-z][\w-]*)) #0/g, (_match, flag: string, name: string) => `${flag} ${name.toUpperCase()}`);
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
    full.stderr.write(nameValues(cli.error(error as Error, { colored })));
    return ExitCode.USAGE;
  }
  const code = await cli.run(command, full);
  if (command instanceof TrellisCommand && command.failure) {
    const { failure } = command;
    if (failure.showUsage) full.stderr.write(cli.error(failure.error as Error, { colored, command }));
    else new Terminal({ ...full, env: full.env }).error(failure.message);
    if (full.env.TRELLIS_DEBUG && failure.error instanceof Error) full.stderr.write(`${failure.error.stack}\n`);
    return failure.exitCode;
  }
  return code;
}
