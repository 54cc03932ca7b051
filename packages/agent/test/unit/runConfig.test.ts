import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CredentialsFile } from '../../src/config/CredentialsFile.js';
import { resolveRunConfig } from '../../src/config/runConfig.js';

const dir = mkdtempSync(join(tmpdir(), 'trellis-agent-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ENV = {
  TRELLIS_URL: 'https://trellis.example.com/',
  TRELLIS_WORKER_ID: 'id-env',
  TRELLIS_WORKER_TOKEN: 'tok-env',
};

describe('the run configuration', () => {
  it('has defaults for a daemon', () => {
    expect(resolveRunConfig({}, ENV)).toEqual({
      serverUrl: 'https://trellis.example.com',
      workerId: 'id-env',
      workerToken: 'tok-env',
      engineBin: undefined,
      concurrency: 1,
      workDir: null,
      once: false,
      claimWaitS: 30,
      heartbeatIntervalS: null,
      graceMs: 60_000,
      lockTimeoutS: 120,
      shutdownMode: 'finish',
      logLevel: 'info',
      allowFileSources: false,
      metricsPort: null,
      providerMirror: 'auto',
      pluginCache: 'auto',
      warmDeploys: true,
    });
  });

  it("reuses a plan's workspace for its deploy unless told not to", () => {
    expect(resolveRunConfig({ 'warm-deploys': 'off' }, ENV).warmDeploys).toBe(false);
    expect(resolveRunConfig({}, { ...ENV, TRELLIS_AGENT_WARM_DEPLOYS: 'off' }).warmDeploys).toBe(false);
    expect(resolveRunConfig({}, { ...ENV, TRELLIS_AGENT_WARM_DEPLOYS: 'on' }).warmDeploys).toBe(true);
    expect(() => resolveRunConfig({ 'warm-deploys': 'yes' }, ENV)).toThrow(
      /--warm-deploys must be "on" or "off" \(got "yes"\)/,
    );
  });

  it('caches providers in the work dir unless told otherwise', () => {
    expect(resolveRunConfig({ 'plugin-cache': 'off' }, ENV).pluginCache).toBe('off');
    expect(resolveRunConfig({}, { ...ENV, TRELLIS_AGENT_PLUGIN_CACHE: '/var/cache/tofu' }).pluginCache).toEqual({
      dir: '/var/cache/tofu',
    });
    expect(() => resolveRunConfig({ 'plugin-cache': 'cache' }, ENV)).toThrow(
      /--plugin-cache must be "auto", "off" or an absolute directory \(got "cache"\)/,
    );
  });

  it('uses provider mirrors unless told not to', () => {
    expect(resolveRunConfig({ 'provider-mirror': 'off' }, ENV).providerMirror).toBe('off');
    expect(resolveRunConfig({}, { ...ENV, TRELLIS_AGENT_PROVIDER_MIRROR: 'off' }).providerMirror).toBe('off');
    expect(() => resolveRunConfig({ 'provider-mirror': 'always' }, ENV)).toThrow(
      /--provider-mirror must be "auto" or "off" \(got "always"\)/,
    );
  });

  it('serves metrics only on a port it is given', () => {
    expect(resolveRunConfig({ 'metrics-port': '9464' }, ENV).metricsPort).toBe(9464);
    expect(resolveRunConfig({}, { ...ENV, TRELLIS_AGENT_METRICS_PORT: '0' }).metricsPort).toBe(0);
    expect(() => resolveRunConfig({ 'metrics-port': 'http' }, ENV)).toThrow(/metrics port/);
  });

  it('allows file:// git sources only when asked to', () => {
    expect(resolveRunConfig({ 'allow-file-sources': true }, ENV).allowFileSources).toBe(true);
    expect(resolveRunConfig({}, { ...ENV, TRELLIS_ALLOW_FILE_SOURCES: '1' }).allowFileSources).toBe(true);
    expect(resolveRunConfig({}, { ...ENV, TRELLIS_ALLOW_FILE_SOURCES: 'true' }).allowFileSources).toBe(true);
    expect(resolveRunConfig({}, { ...ENV, TRELLIS_ALLOW_FILE_SOURCES: '0' }).allowFileSources).toBe(false);
  });

  it('takes flags over the environment', () => {
    const config = resolveRunConfig(
      { url: 'http://127.0.0.1:8080', 'worker-id': 'id-flag', concurrency: '4', 'cancel-grace': '5', once: true },
      { ...ENV, TRELLIS_ENGINE_BIN: '/opt/tofu', TRELLIS_AGENT_HEARTBEAT_INTERVAL_S: '10' },
    );
    expect(config).toMatchObject({
      serverUrl: 'http://127.0.0.1:8080',
      workerId: 'id-flag',
      workerToken: 'tok-env',
      engineBin: '/opt/tofu',
      concurrency: 4,
      graceMs: 5000,
      once: true,
      heartbeatIntervalS: 10,
    });
  });

  it('falls back to the credentials file of register', () => {
    const path = join(dir, 'agent.json');
    new CredentialsFile(path).write({
      server: 'https://stored.example.com',
      worker_id: 'id-file',
      worker_token: 'tok-file',
      name: 'n',
      registered_at: '2026-01-01T00:00:00Z',
    });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(resolveRunConfig({ 'credentials-file': path }, {})).toMatchObject({
      serverUrl: 'https://stored.example.com',
      workerId: 'id-file',
      workerToken: 'tok-file',
    });
  });

  it('explains what is wrong', () => {
    expect(() => resolveRunConfig({ 'credentials-file': join(dir, 'none.json') }, {})).toThrow(
      /trellis-agent register/,
    );
    expect(() => resolveRunConfig({ concurrency: '0' }, ENV)).toThrow(/concurrency must be a whole number from 1/);
    expect(() => resolveRunConfig({ 'on-shutdown': 'later' }, ENV)).toThrow(/"finish" or "cancel"/);
    expect(() => resolveRunConfig({ url: 'not a url' }, ENV)).toThrow(/is not a URL/);
  });
});
