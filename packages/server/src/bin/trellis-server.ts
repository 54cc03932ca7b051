#!/usr/bin/env node
import { SIGN_IN_LINK_MAX_HOURS, ValidationError } from '@trellis/core';
import { openDatabase } from '../adapters.js';
import { ConfigError, loadConfig } from '../config.js';
import { createControlPlane } from '../createControlPlane.js';
import { createLogger } from '../logger.js';
import { VERSION } from '../version.js';

const USAGE = `Usage: trellis-server [serve]   start the control plane (default)
       trellis-server migrate   apply pending database migrations and exit
       trellis-server keys rotate
                                add a new signing key for job identity tokens; the previous
                                public key stays in the JWKS until its tokens have expired
       trellis-server users invite EMAIL [--name NAME] [--hours N] [--json]
                                print a one-time sign-in link for a teammate (local and small
                                installs without an OAuth app); it works once, for N hours
                                (default 24, at most 168)
       trellis-server --version

Configuration comes from the environment: PORT, HOST, TRELLIS_DATA_DIR, DATABASE_URL,
TRELLIS_ARTIFACTS_URL, TRELLIS_WEB_URL, CLI_JWT_SECRET, RELEASE_API_SECRET, ... (docs/configuration.md).`;

async function main(argv: string[]): Promise<number> {
  const command = argv[0] ?? 'serve';
  if (command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (command === '--version' || command === '-v' || command === 'version') {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const logger = createLogger();
  if (command === 'migrate') {
    const config = loadConfig();
    const database = await openDatabase(config.databaseUrl, logger, process.env, { poolMax: config.databasePoolMax });
    try {
      await database.migrate();
    } finally {
      await database.close();
    }
    process.stdout.write('migrations applied\n');
    return 0;
  }
  if (command === 'keys') {
    if (argv[1] !== 'rotate') {
      process.stderr.write(`trellis-server: keys needs a subcommand: rotate\n\n${USAGE}\n`);
      return 2;
    }
    const controlPlane = await createControlPlane({ logger });
    try {
      const rotated = await controlPlane.useCases.workloadIdentity.rotate();
      const json = argv.includes('--json');
      process.stdout.write(
        json
          ? `${JSON.stringify(rotated)}\n`
          : `new signing key ${rotated.kid} (${rotated.algorithm}); ${rotated.retired} previous key(s) stay published until their tokens expire\n`,
      );
    } finally {
      await controlPlane.close();
    }
    return 0;
  }
  if (command === 'users') {
    if (argv[1] !== 'invite' || argv[2] === undefined || argv[2].startsWith('-')) {
      process.stderr.write(`trellis-server: users needs a subcommand: invite EMAIL\n\n${USAGE}\n`);
      return 2;
    }
    return inviteUser(argv[2], argv.slice(3), logger);
  }
  if (command !== 'serve') {
    process.stderr.write(`trellis-server: unknown command "${command}"\n\n${USAGE}\n`);
    return 2;
  }

  const controlPlane = await createControlPlane({ logger });
  const { url } = await controlPlane.listen();
  // Before the line that says it listens: whoever reads it may stop the server at once.
  const stopped = new Promise<void>((done) => {
    const stop = (signal: string) => {
      logger.warn({ signal }, 'shutting down: finishing in-flight requests');
      controlPlane.close().then(done, (error) => {
        logger.error({ err: error }, 'shutdown failed');
        done();
      });
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  const { config } = controlPlane;
  for (const warning of config.warnings) logger.warn({}, warning);
  logger.info(
    { url, database: config.databaseUrl.replace(/\/\/[^@/]*@/, '//***@'), artifacts: config.artifactsUrl },
    'trellis-server listening',
  );
  process.stdout.write(`\nTrellis control plane listening on ${url}\n`);
  if (config.bootstrapToken && config.bootstrapTokenOneTime) {
    // A generated token exists nowhere else, so it is shown; it works once, for this start only.
    const link = `${config.webUrl}/auth/bootstrap?token=${encodeURIComponent(config.bootstrapToken)}`;
    process.stdout.write(`Sign in as ${config.bootstrapEmail} (one-time link): ${link}\n\n`);
  } else if (config.bootstrapToken) {
    // The operator's token is theirs to keep: never echoed to a terminal or a log collector.
    process.stdout.write(
      `Sign in as ${config.bootstrapEmail} at ${config.webUrl}/signin with the token set in TRELLIS_BOOTSTRAP_TOKEN\n\n`,
    );
  }

  await stopped;
  logger.info({}, 'stopped');
  return 0;
}

/** `trellis-server users invite EMAIL`: a one-time sign-in link, kept in the database for whichever replica serves it. */
async function inviteUser(email: string, args: string[], logger: ReturnType<typeof createLogger>): Promise<number> {
  const flags = parseFlags(args, ['--name', '--hours'], ['--json']);
  if (typeof flags === 'string') {
    process.stderr.write(`trellis-server: ${flags}\n\n${USAGE}\n`);
    return 2;
  }
  const name = typeof flags['--name'] === 'string' ? flags['--name'] : null;
  const hoursText = typeof flags['--hours'] === 'string' ? flags['--hours'] : undefined;
  const hours = hoursText === undefined ? undefined : Number(hoursText);
  const controlPlane = await createControlPlane({ logger });
  try {
    const invitation = await controlPlane.useCases.signInLinks.invite({ email, name, hours });
    const link = `${controlPlane.config.webUrl}/auth/link?token=${invitation.token}`;
    process.stdout.write(
      flags['--json'] === true
        ? `${JSON.stringify({ email: invitation.user.email, user_id: invitation.user.id, link, expires_at: invitation.expires_at })}\n`
        : `One-time sign-in link for ${invitation.user.email} (works once, until ${invitation.expires_at}):\n${link}\n`,
    );
    return 0;
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    // Said in the words the person typed: the argument or the flag, and what they gave.
    const field = error.fields[0]?.path;
    process.stderr.write(
      field === 'hours'
        ? `trellis-server: --hours must be a whole number from 1 to ${SIGN_IN_LINK_MAX_HOURS} (got "${hoursText}")\n`
        : `trellis-server: "${email}" is not an email address\n`,
    );
    return 2;
  } finally {
    await controlPlane.close();
  }
}

/** `--flag value` options and `--switch`es; an error message for anything else. */
function parseFlags(args: string[], valued: string[], switches: string[]): Record<string, string | true> | string {
  const flags: Record<string, string | true> = {};
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] as string;
    if (switches.includes(arg)) flags[arg] = true;
    else if (valued.includes(arg)) {
      const value = args[++index];
      if (value === undefined) return `${arg} needs a value`;
      flags[arg] = value;
    } else return `unknown option "${arg}"`;
  }
  return flags;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof ConfigError || (error as { kind?: string }).kind === 'unavailable') {
      process.stderr.write(`trellis-server: ${(error as Error).message}\n`);
      process.exitCode = 1;
      return;
    }
    process.stderr.write(`trellis-server: failed to start: ${(error as Error).stack ?? String(error)}\n`);
    process.exitCode = 1;
  },
);
