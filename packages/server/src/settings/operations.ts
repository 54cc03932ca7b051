import { oneOf, optionalInteger, optionalText, secret } from './Setting.js';

/** Pino's levels. */
const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/** Logs, metrics and traces. */
export const OPERATIONS_SETTINGS = {
  logLevel: oneOf({
    env: 'TRELLIS_LOG_LEVEL',
    values: LOG_LEVELS,
    default: 'info',
    description: 'the least severe level logged (`silent`: nothing)',
  }),
  metrics: {
    token: secret({
      env: 'TRELLIS_METRICS_TOKEN',
      minLength: 16,
      hint: 'generate one with: openssl rand -base64 32',
      description:
        'serves `GET /metrics` (Prometheus text format) on the main port to requests bearing `Authorization: Bearer <token>` (compared in constant time). With neither this nor `TRELLIS_METRICS_PORT`, metrics are **off** ([observability.md](observability.md))',
    }),
    port: optionalInteger({
      env: 'TRELLIS_METRICS_PORT',
      min: 0,
      max: 65_535,
      description:
        "serves `GET /metrics` on this port of `HOST` instead, and not on the main port; without a token there, keep the port private (a pod port Prometheus scrapes, not the Service's); with `TRELLIS_METRICS_TOKEN` too, the token is required there",
    }),
  },
  otlpEndpoint: optionalText({
    env: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    accepts: 'a URL',
    shownDefault: 'unset: traces off',
    description:
      'sends traces to this OpenTelemetry collector over OTLP/HTTP (e.g. `http://otel-collector:4318`); the exporter reads the other standard `OTEL_EXPORTER_OTLP_*` variables (headers, timeout). The agent reads it too ([observability.md](observability.md#traces))',
  }),
};
