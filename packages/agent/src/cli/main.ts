import { type BaseContext, Builtins, Cli, type Command } from 'clipanion';
import { AGENT_VERSION } from '../version.js';
import { RegisterCommand } from './commands/RegisterCommand.js';
import { RunCommand } from './commands/RunCommand.js';

export const EXIT = { ok: 0, jobFailed: 1, usage: 2, config: 3 } as const;

/** What a command reads and writes: the environment and the two output streams. */
export interface CliIo {
  env: NodeJS.ProcessEnv;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/** clipanion shows an option's value as `#0`; `--name NAME` reads better. */
function nameValues(text: string): string {
  return text.replace(/(--([a-z][\w-]*)) #0/g, (_match, flag: string, name: string) => `${flag} ${name.toUpperCase()}`);
}

class AgentCli extends Cli {
  protected override getUsageByIndex(...args: Parameters<Cli['getUsageByIndex']>): ReturnType<Cli['getUsageByIndex']> {
    const { usage, options } = super.getUsageByIndex(...args);
    return {
      usage: nameValues(usage),
      options: options.map((option) => ({ ...option, definition: nameValues(option.definition) })),
    };
  }
}

export function createAgentCli(): Cli {
  const cli = new AgentCli({
    binaryLabel: 'trellis-agent: runs OpenTofu/Terraform jobs of a Trellis control plane on this machine',
    binaryName: 'trellis-agent',
    binaryVersion: AGENT_VERSION,
    enableColors: false,
  });
  cli.register(RegisterCommand);
  cli.register(RunCommand);
  cli.register(Builtins.HelpCommand);
  cli.register(Builtins.VersionCommand);
  return cli;
}

/**
 * `trellis-agent <command> [flags]`; resolves with the exit code. Usage mistakes (an unknown
 * command or flag, a missing value) go to stderr with the usage, exit 2; no command at all shows
 * the usage on stdout, also exit 2.
 */
export async function runAgentCli(argv: string[], context: Partial<BaseContext> = {}): Promise<number> {
  const full: BaseContext = { ...Cli.defaultContext, ...context };
  const cli = createAgentCli();
  const aliases: Record<string, string> = { help: '--help', version: '--version' };
  const args = argv.length === 1 && argv[0] !== undefined && aliases[argv[0]] ? [aliases[argv[0]] as string] : argv;
  if (args.length === 0) {
    full.stdout.write(cli.usage(null));
    return EXIT.usage;
  }
  let command: Command;
  try {
    command = cli.process(args, full);
  } catch (error) {
    full.stderr.write(cli.error(error as Error, { colored: false }));
    return EXIT.usage;
  }
  return cli.run(command, full);
}
