import { ConfigError, loadConfig } from '@trellis/server';
import { describe, expect, it } from 'vitest';

const BASE = { TRELLIS_DATA_DIR: '/tmp/trellis-config-test', CLI_JWT_SECRET: 'x'.repeat(40) };

describe('live-log stream settings', () => {
  it('default to 1 MiB held per stream, 20 streams per user and 200 per job', () => {
    expect(loadConfig(BASE).logStreams).toEqual({ maxBufferBytes: 1024 * 1024, perUser: 20, perJob: 200 });
  });

  it('are read from the environment and checked', () => {
    const config = loadConfig({
      ...BASE,
      TRELLIS_STREAM_MAX_BUFFER_BYTES: '262144',
      TRELLIS_STREAMS_PER_USER: '5',
      TRELLIS_STREAMS_PER_JOB: '50',
    });
    expect(config.logStreams).toEqual({ maxBufferBytes: 262_144, perUser: 5, perJob: 50 });
    expect(() => loadConfig({ ...BASE, TRELLIS_STREAM_MAX_BUFFER_BYTES: '1000' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...BASE, TRELLIS_STREAMS_PER_USER: '0' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...BASE, TRELLIS_STREAMS_PER_JOB: 'many' })).toThrow(ConfigError);
  });
});
