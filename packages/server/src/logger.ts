import type { Logger } from '@trellis/http';
import { pino } from 'pino';

/** Structured JSON logs on stdout; credentials are redacted wherever they might appear. */
export function createLogger(level = process.env.TRELLIS_LOG_LEVEL || 'info'): Logger {
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
