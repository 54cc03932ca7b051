#!/usr/bin/env node
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
  if (command !== 'serve') {
    process.stderr.write(`trellis-server: unknown command "${command}"\n\n${USAGE}\n`);
    return 2;
  }

  const controlPlane = await createControlPlane({ logger });
  const { url } = await controlPlane.listen();
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

  await new Promise<void>((done) => {
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
  logger.info({}, 'stopped');
  return 0;
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
