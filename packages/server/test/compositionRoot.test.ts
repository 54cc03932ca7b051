/**
 * Issue 11 §5, an honest composition root: an embedder's own port implementations, given to
 * `createControlPlane({ register })`, are the ones the server uses over HTTP; reading the
 * configuration writes nothing; shutdown closes the artifact store.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { coreServices } from '@trellis/core';
import { ensureGeneratedSecrets, loadConfig, resolve } from '@trellis/server';
import { MemoryArtifactStore, MemoryEventBus } from '@trellis/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RunningControlPlane, startControlPlane, vineyardWithConfiguration } from './support/controlPlane.js';

describe('reading the configuration', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'trellis-config-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes nothing; ensureGeneratedSecrets keeps the generated secret for the next start', () => {
    const dataDir = join(dir, 'data');
    const env = { TRELLIS_DATA_DIR: dataDir, TRELLIS_BOOTSTRAP_TOKEN: 'x'.repeat(32) };
    const first = loadConfig(env);
    expect(existsSync(dataDir)).toBe(false);
    expect(first.cliJwtSecret.length).toBeGreaterThanOrEqual(32);
    expect(Object.keys(first.generatedSecrets)).toEqual(['CLI_JWT_SECRET']);

    const kept = ensureGeneratedSecrets(first);
    const file = join(dataDir, 'secrets.json');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ CLI_JWT_SECRET: first.cliJwtSecret });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(kept.generatedSecrets).toEqual({});
    expect(kept.cliJwtSecret).toBe(first.cliJwtSecret);

    const again = loadConfig(env);
    expect(again.cliJwtSecret).toBe(first.cliJwtSecret);
    expect(again.generatedSecrets).toEqual({});
  });

  it('keeps nothing when the secret is set, or replaced by the embedder', () => {
    const dataDir = join(dir, 'set');
    const set = loadConfig({ TRELLIS_DATA_DIR: dataDir, CLI_JWT_SECRET: 's'.repeat(40) });
    ensureGeneratedSecrets(set);
    const replaced = { ...loadConfig({ TRELLIS_DATA_DIR: dataDir }), cliJwtSecret: 'r'.repeat(40) };
    const started = ensureGeneratedSecrets(replaced);
    expect(existsSync(dataDir)).toBe(false);
    expect(started.cliJwtSecret).toBe('r'.repeat(40));
  });
});

describe('createControlPlane({ register }): the embedder’s ports are the ones used', () => {
  let server: RunningControlPlane;
  const artifacts = new MemoryArtifactStore();
  const events = new MemoryEventBus();

  beforeAll(async () => {
    server = await startControlPlane('sqlite', {
      env: { TRELLIS_ARTIFACTS_URL: 'file:///nonexistent/never-opened' },
      register: { artifactStore: artifacts, eventBus: events },
    });
  });
  afterEach(() => {
    artifacts.unavailable = false;
  });
  afterAll(async () => {
    await server?.close();
  });

  it('registers them under core’s tokens', () => {
    expect(resolve(server.controlPlane.container, coreServices.artifactStore)).toBe(artifacts);
    expect(resolve(server.controlPlane.container, coreServices.eventBus)).toBe(events);
  });

  it('stores an uploaded plan in the registered artifact store and publishes on the registered bus', async () => {
    const user = await server.userClient('embedder@example.com');
    const { configuration } = await vineyardWithConfiguration(user, 'custom');
    const plan = await user.createJob({ job_type: 'PLAN', configuration_id: configuration.id });
    expect(events.ofType('job_queued').map((event) => event.job_id)).toContain(plan.id);

    const agent = await server.agentClient(user, 'planner');
    await agent.claimJob();
    const content = Buffer.from('a plan kept by the embedder\n');
    await agent.uploadPlanArtifact(plan.id, content, content.length);
    const key = artifacts.keys().find((name) => name.includes(plan.id));
    expect(key).toMatch(/^plans\/.+\/terraform\.plan\.out$/);
    expect(artifacts.bytesOf(key as string)).toEqual(content);
    expect(events.ofType('job_status_changed').map((event) => event.job_id)).toContain(plan.id);
  });

  it('reports readiness from the registered artifact store', async () => {
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    artifacts.unavailable = true;
    expect((await fetch(`${server.url}/readyz`)).status).toBe(503);
  });

  it('closes the artifact store and the event bus on shutdown, once', async () => {
    const store = new MemoryArtifactStore();
    const bus = new MemoryEventBus();
    const other = await startControlPlane('sqlite', { register: { artifactStore: store, eventBus: bus } });
    await other.controlPlane.close();
    await other.close();
    expect(store.closeCalls).toBe(1);
    expect(bus.closeCalls).toBe(1);
  });
});
