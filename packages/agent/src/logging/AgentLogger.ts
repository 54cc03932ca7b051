export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const LEVELS: Record<LogLevel | 'silent', number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export type LogFields = Record<string, string | number | boolean | null | undefined>;

/**
 * The agent's own log: one JSON object per line on stderr (time, level, msg, fields), for
 * journald and log shippers. Job output never goes here, and neither does any secret.
 */
export class AgentLogger {
  constructor(
    private readonly level: LogLevel | 'silent' = 'info',
    private readonly fields: LogFields = {},
    private readonly write: (line: string) => void = (line) => process.stderr.write(line),
  ) {}

  child(fields: LogFields): AgentLogger {
    return new AgentLogger(this.level, { ...this.fields, ...fields }, this.write);
  }

  debug(msg: string, fields?: LogFields): void {
    this.log('debug', msg, fields);
  }
  info(msg: string, fields?: LogFields): void {
    this.log('info', msg, fields);
  }
  warn(msg: string, fields?: LogFields): void {
    this.log('warn', msg, fields);
  }
  error(msg: string, fields?: LogFields): void {
    this.log('error', msg, fields);
  }

  private log(level: LogLevel, msg: string, fields: LogFields = {}): void {
    if (LEVELS[level] < LEVELS[this.level]) return;
    const entry = { time: new Date().toISOString(), level, msg, ...this.fields, ...fields };
    this.write(`${JSON.stringify(entry)}\n`);
  }
}

export function parseLogLevel(value: string | undefined): LogLevel | 'silent' {
  if (value === undefined || value === '') return 'info';
  if (value in LEVELS) return value as LogLevel | 'silent';
  throw new Error(`log level must be one of ${Object.keys(LEVELS).join(', ')}`);
}

/** A short description of an error for the agent's log (never a stack trace with secrets). */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
