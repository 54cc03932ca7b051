import { type DestinationStream, type Logger, pino } from 'pino';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const LEVELS: ReadonlyArray<LogLevel | 'silent'> = ['debug', 'info', 'warn', 'error', 'silent'];

const SECRET_FIELDS = ['token', 'worker_token', 'access_token', 'refresh_token', 'password', 'secret'];

export type LogFields = Record<string, string | number | boolean | null | undefined>;

/** Where the log lines go: stderr by default (synchronously, so none is lost at exit). */
export type LogDestination = DestinationStream;

/**
 * The agent's own log, through pino like the server's: one JSON object per line on stderr
 * (`time` ISO 8601, `level` as a word, `msg`, fields), for journald and log shippers. Job output
 * never goes here, and credentials are redacted wherever a field might carry one.
 */
export class AgentLogger {
  private readonly pino: Logger;

  constructor(level: LogLevel | 'silent' = 'info', fields: LogFields = {}, destination?: LogDestination | Logger) {
    this.pino =
      destination && 'child' in destination
        ? destination.child(fields)
        : pino(
            {
              level,
              base: { service: 'trellis-agent', ...fields },
              timestamp: pino.stdTimeFunctions.isoTime,
              formatters: { level: (label) => ({ level: label }) },
              redact: {
                paths: SECRET_FIELDS.flatMap((field) => [field, `*.${field}`]),
                censor: '***',
              },
            },
            destination ?? pino.destination({ dest: 2, sync: true }),
          );
  }

  child(fields: LogFields): AgentLogger {
    return new AgentLogger('info', fields, this.pino);
  }

  debug(msg: string, fields?: LogFields): void {
    this.pino.debug(fields ?? {}, msg);
  }
  info(msg: string, fields?: LogFields): void {
    this.pino.info(fields ?? {}, msg);
  }
  warn(msg: string, fields?: LogFields): void {
    this.pino.warn(fields ?? {}, msg);
  }
  error(msg: string, fields?: LogFields): void {
    this.pino.error(fields ?? {}, msg);
  }
}

export function parseLogLevel(value: string | undefined): LogLevel | 'silent' {
  if (value === undefined || value === '') return 'info';
  if ((LEVELS as readonly string[]).includes(value)) return value as LogLevel | 'silent';
  throw new Error(`log level must be one of ${LEVELS.join(', ')}`);
}

/** A short description of an error for the agent's log (never a stack trace with secrets). */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
