/**
 * A configuration's execution mode (issue 27) set through Trellis's own API on loopback, on SQLite
 * and Postgres: `PATCH /api/cli/configurations/{name}` with `execution_mode` changes where the stock
 * CLI's runs go, the configuration's detail and the Terraform Cloud workspace say the same, the
 * change is audited, and any other value is refused with problem+json naming it.
 */
import type { TrellisClient } from '@trellis/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningControlPlane, startControlPlane, vineyardWithConfiguration } from './support/controlPlane.js';
import { describeEachDialect } from './support/dialects.js';

describeEachDialect('execution mode through the API', (dialect) => {
  let plane: RunningControlPlane;
  let alice: TrellisClient;
  let token: string;
  let vineId: string;

  async function call(method: string, path: string, body?: unknown) {
    const response = await fetch(`${plane.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return {
      status: response.status,
      type: response.headers.get('content-type') ?? '',
      body: (text === '' ? {} : JSON.parse(text)) as Record<string, unknown>,
    };
  }

  beforeAll(async () => {
    plane = await startControlPlane(dialect);
    alice = await plane.userClient('alice@example.com');
    token = await plane.accessToken('alice@example.com');
    vineId = (await vineyardWithConfiguration(alice, 'web')).configuration.id;
  });

  afterAll(async () => {
    await plane?.close();
  });

  it('switches to local and back; the detail, the workspace and the audit log agree', async () => {
    expect((await alice.getConfiguration('web')).execution_mode).toBe('remote');
    const local = await call('PATCH', '/api/cli/configurations/web', { execution_mode: 'local' });
    expect(local.status).toBe(200);
    expect(local.body.execution_mode).toBe('local');
    expect((await alice.getConfiguration(vineId)).execution_mode).toBe('local');

    const workspace = await call('GET', `/api/v2/workspaces/ws-${vineId}`);
    expect(workspace.status).toBe(200);
    const attributes = (workspace.body.data as { attributes: Record<string, unknown> }).attributes;
    expect(attributes).toMatchObject({ 'execution-mode': 'local', operations: false });

    const audit = await call('GET', '/api/audit');
    expect(audit.status).toBe(200);
    const updates = (audit.body.entries as { action: string; target: { id: string }; details: object }[]).filter(
      (entry) => entry.action === 'vine.update' && entry.target.id === vineId,
    );
    expect(updates.map((entry) => entry.details)).toEqual([
      {
        name: 'web',
        changed: 'execution_mode',
        execution_mode: 'local',
        previous_execution_mode: 'remote',
        config_hash_changed: false,
      },
    ]);

    const remote = await call('PATCH', `/api/cli/configurations/${vineId}`, { execution_mode: 'remote' });
    expect(remote.status).toBe(200);
    expect(remote.body.execution_mode).toBe('remote');
  });

  it('refuses any other value with problem+json naming it; nothing changes', async () => {
    for (const [value, named] of [
      ['agent', '"agent"'],
      ['LOCAL', '"LOCAL"'],
      [null, 'null'],
      [1, '1'],
    ] as const) {
      const refused = await call('PATCH', '/api/cli/configurations/web', { execution_mode: value });
      expect(refused.status).toBe(400);
      expect(refused.type).toContain('application/problem+json');
      expect(refused.body.code).toBe('validation_failed');
      expect(refused.body.detail).toBe(`execution_mode must be remote or local, not ${named}`);
      expect(refused.body.errors).toEqual([
        { path: 'body.execution_mode', message: `must be remote or local, not ${named}` },
      ]);
    }
    expect((await alice.getConfiguration('web')).execution_mode).toBe('remote');
  });
});
