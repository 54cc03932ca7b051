/**
 * Tags and run triggers set through Trellis's own API (issue 29), on SQLite and Postgres:
 * `POST /api/cli/configurations` with `tags` and `triggers`, `PATCH` replacing the tags, the fleet
 * filtering by them, and a bad tag refused as a problem naming the field.
 */
import type { TrellisClient } from '@trellis/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { INLINE_MAIN_TF, type RunningControlPlane, startControlPlane } from './support/controlPlane.js';
import { describeEachDialect } from './support/dialects.js';

describeEachDialect('configuration tags over HTTP (issue 29)', (dialect) => {
  let server: RunningControlPlane;
  let alice: TrellisClient;
  let token: string;
  let vineyardId: string;
  const source = { type: 'inline', files: { 'main.tf': INLINE_MAIN_TF } };

  const send = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return {
      status: response.status,
      type: response.headers.get('content-type'),
      body: (await response.json()) as Record<string, unknown> & {
        tags?: string[];
        triggers?: { after: string[] };
        errors?: { path: string; message: string }[];
        configurations?: { name: string; tags: string[] }[];
      },
    };
  };
  const tagged = async (tag: string) =>
    ((await send('GET', `/api/cli/configurations?tag=${encodeURIComponent(tag)}`)).body.configurations ?? []).map(
      (vine) => [vine.name, vine.tags],
    );

  beforeAll(async () => {
    server = await startControlPlane(dialect);
    alice = await server.userClient('alice@example.com');
    token = await server.accessToken('alice@example.com');
    vineyardId = (await alice.createVineyard('tagged-yard')).id;
  }, 120_000);
  afterAll(async () => {
    await server?.close();
  });

  it('creates a configuration with tags and run triggers, and the fleet finds it by tag', async () => {
    const network = await send('POST', '/api/cli/configurations', { name: 'network', vineyard_id: vineyardId, source });
    expect(network.status).toBe(201);
    const created = await send('POST', '/api/cli/configurations', {
      name: 'web',
      vineyard_id: vineyardId,
      source,
      tags: ['Prod', 'team:web', 'prod'],
      triggers: { after: [network.body.id] },
    });
    expect(created.status).toBe(201);
    expect(created.body.tags).toEqual(['prod', 'team:web']);
    expect(created.body.triggers).toEqual({ after: [network.body.id] });
    expect(await tagged('team:web')).toEqual([['web', ['prod', 'team:web']]]);
    expect((await send('GET', '/api/cli/configurations/web')).body.tags).toEqual(['prod', 'team:web']);
  });

  it('replaces the tags with PATCH, and [] removes them', async () => {
    const changed = await send('PATCH', '/api/cli/configurations/web', { tags: ['prod', 'eu'] });
    expect(changed.status).toBe(200);
    expect(changed.body.tags).toEqual(['eu', 'prod']);
    expect(await tagged('team:web')).toEqual([]);
    expect(await tagged('eu')).toEqual([['web', ['eu', 'prod']]]);
    const cleared = await send('PATCH', '/api/cli/configurations/web', { tags: [] });
    expect(cleared.body.tags).toEqual([]);
    expect(await tagged('eu')).toEqual([]);
  });

  it('refuses a bad tag as a problem naming the field, at creation and in a change; nothing changes', async () => {
    const refused = await send('POST', '/api/cli/configurations', {
      name: 'bad',
      vineyard_id: vineyardId,
      source,
      tags: ['ok', 'not ok'],
    });
    expect(refused.status).toBe(400);
    expect(refused.type).toMatch(/^application\/problem\+json/);
    expect(refused.body).toMatchObject({ code: 'validation_failed' });
    expect(refused.body.errors).toEqual([
      {
        path: 'tags',
        message:
          '"not ok" is not a tag: tags are letters, digits, ":", "_", "." and "-", starting with a letter or digit',
      },
    ]);
    expect((await send('GET', '/api/cli/configurations/bad')).status).toBe(404);
    const edit = await send('PATCH', '/api/cli/configurations/web', { tags: ['x/y'] });
    expect(edit.status).toBe(400);
    expect(edit.body.errors?.map((issue) => issue.path)).toEqual(['tags']);
    // More than 100 tags is refused by the contract's schema before core.
    const many = await send('PATCH', '/api/cli/configurations/web', {
      tags: Array.from({ length: 101 }, (_, index) => `t${index}`),
    });
    expect(many.status).toBe(400);
  });
});
