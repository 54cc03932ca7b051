import { ConfigError, loadConfig } from '@trellis/server';
import { describe, expect, it } from 'vitest';

const BASE = { TRELLIS_DATA_DIR: '/tmp/trellis-config-test', CLI_JWT_SECRET: 'x'.repeat(40) };

describe('metrics and traces settings', () => {
  it('are off by default', () => {
    const config = loadConfig(BASE);
    expect(config.metrics).toEqual({ token: null, port: null });
    expect(config.otlpEndpoint).toBeNull();
  });

  it('are read from the environment and checked', () => {
    const config = loadConfig({
      ...BASE,
      TRELLIS_METRICS_TOKEN: 'a-metrics-token-of-32-characters',
      TRELLIS_METRICS_PORT: '9464',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
    });
    expect(config.metrics).toEqual({ token: 'a-metrics-token-of-32-characters', port: 9464 });
    expect(config.otlpEndpoint).toBe('http://collector:4318');
    expect(() => loadConfig({ ...BASE, TRELLIS_METRICS_TOKEN: 'short' })).toThrow(/at least 16 characters/);
    expect(() => loadConfig({ ...BASE, TRELLIS_METRICS_PORT: '70000' })).toThrow(ConfigError);
  });
});
