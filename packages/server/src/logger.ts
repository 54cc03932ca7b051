import type { Logger } from '@trellis/http';
import { pino } from 'pino';
import { parseSettings } from './settings/Setting.js';
import { SERVER_SETTINGS } from './settings/table.js';

/** `TRELLIS_LOG_LEVEL` of `env`, by its row of the settings table. */
export function logLevelOf(env: Record<string, string | undefined>): string {
  return parseSettings({ logLevel: SERVER_SETTINGS.logLevel }, env).logLevel;
}

/** Structured JSON logs on stdout; credentials are redacted wherever they might appear. */
export function createLogger(level = logLevelOf(process.env)): Logger {
  return pino({
    level,
    base: { service: 'trellis-server' },
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'req.headers["x-worker-token"]',
        '*.token',
        '*.worker_token',
        '*.access_token',
        '*.refresh_token',
        '*.provider_token',
        '*.password',
        '*.secret',
      ],
      censor: '***',
    },
  });
}
