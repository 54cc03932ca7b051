import { parseArgs } from 'node:util';
import { AGENT_VERSION } from '../version.js';
import { registerCommand } from './registerCommand.js';
import { runCommand } from './runCommand.js';
import { USAGE } from './usage.js';

export const EXIT = { ok: 0, jobFailed: 1, usage: 2, config: 3 } as const;

export interface CliIo {
  env: NodeJS.ProcessEnv;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

const defaultIo: CliIo = {
  env: process.env,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

const RUN_OPTIONS = {
  url: { type: 'string' },
  'worker-id': { type: 'string' },
  'worker-token': { type: 'string' },
  'credentials-file': { type: 'string' },
  'engine-bin': { type: 'string' },
  concurrency: { type: 'string' },
  'work-dir': { type: 'string' },
  once: { type: 'boolean' },
  'claim-wait': { type: 'string' },
  'heartbeat-interval': { type: 'string' },
  'cancel-grace': { type: 'string' },
  'lock-timeout': { type: 'string' },
  'on-shutdown': { type: 'string' },
  'log-level': { type: 'string' },
} as const;

const REGISTER_OPTIONS = {
  name: { type: 'string' },
  url: { type: 'string' },
  'credentials-file': { type: 'string' },
  force: { type: 'boolean' },
} as const;

/** `trellis-agent <command> [flags]`; resolves with the exit code. */
export async function runAgentCli(argv: string[], io: CliIo = defaultIo): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'run':
        return await runCommand(parseArgs({ args: rest, options: RUN_OPTIONS, strict: true }).values, io);
      case 'register':
        return await registerCommand(parseArgs({ args: rest, options: REGISTER_OPTIONS, strict: true }).values, io);
      case '--version':
      case 'version':
        io.stdout(`${AGENT_VERSION}\n`);
        return EXIT.ok;
      case undefined:
      case '--help':
      case '-h':
      case 'help':
        io.stdout(USAGE);
        return command === undefined ? EXIT.usage : EXIT.ok;
      default:
        io.stderr(`trellis-agent: unknown command "${command}"\n\n${USAGE}`);
        return EXIT.usage;
    }
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS')) {
      io.stderr(`trellis-agent ${command}: ${(error as Error).message}\n`);
      return EXIT.usage;
    }
    throw error;
  }
}
