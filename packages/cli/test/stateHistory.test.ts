/** `trellis configs state list|pull|rollback` (issue 26), real binary and server. */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, runTrellis, TempHome, TestServer } from './harness.js';

let server: TestServer;
let home: TempHome;

beforeAll(async () => {
  server = await new TestServer().start();
  home = new TempHome();
  await login(server, home);
});
afterAll(async () => {
  await server?.destroy();
  home?.remove();
});

function state(serial: number, marker: string): string {
  return `${JSON.stringify({ version: 4, terraform_version: '1.12.6', serial, lineage: 'lineage-1', outputs: { marker: { value: marker, type: 'string' } }, resources: [] })}\n`;
}

/** Writes versions through the Terraform Cloud API, as the stock CLI's cloud block does. */
async function tfe(path: string, method = 'GET', body?: unknown) {
  const response = await fetch(`${server.url}/api/v2${path}`, {
    method,
    headers: {
      authorization: `Bearer ${home.readAuth().access_token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/vnd.api+json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  expect(response.status, `${method} ${path}: ${await response.clone().text()}`).toBeLessThan(300);
  return response.status === 204 ? null : response.json();
}

describe('a configuration state history in the CLI', () => {
  it('lists the versions, pulls one, and rolls back to it', async () => {
    const account = await tfe('/account/details');
    const org = account.data.attributes.username;
    const ws = await tfe(`/organizations/${org}/workspaces`, 'POST', {
      data: { type: 'workspaces', attributes: { name: 'hist' } },
    });
    await tfe(`/workspaces/${ws.data.id}/actions/lock`, 'POST', { reason: 'test' });
    for (const [serial, marker] of [
      [1, 'first'],
      [2, 'second'],
    ] as const) {
      const text = state(serial, marker);
      await tfe(`/workspaces/${ws.data.id}/state-versions`, 'POST', {
        data: {
          type: 'state-versions',
          attributes: {
            serial,
            lineage: 'lineage-1',
            md5: createHash('md5').update(text).digest('hex'),
            state: Buffer.from(text).toString('base64'),
          },
        },
      });
    }
    await tfe(`/workspaces/${ws.data.id}/actions/unlock`, 'POST');

    const listed = await runTrellis(['configs', 'state', 'list', 'hist', '--json'], { env: home.env() });
    expect(listed.code, listed.stderr).toBe(0);
    const history = JSON.parse(listed.stdout) as { versions: { id: number; serial: number }[]; lock: unknown };
    expect(history.versions.map((version) => version.serial)).toEqual([2, 1]);
    expect(history.lock).toBeNull();
    const table = await runTrellis(['configs', 'state', 'list', 'hist'], { env: home.env() });
    expect(table.stdout).toMatch(/VERSION\s+SERIAL/);

    const first = history.versions[1]?.id as number;
    const pulled = await runTrellis(['configs', 'state', 'pull', 'hist', '--version', String(first)], {
      env: home.env(),
    });
    expect(pulled.code, pulled.stderr).toBe(0);
    expect(JSON.parse(pulled.stdout).outputs.marker.value).toBe('first');
    const file = join(home.dir, 'current.tfstate');
    const saved = await runTrellis(['configs', 'state', 'pull', 'hist', '-o', file], { env: home.env() });
    expect(saved.code, saved.stderr).toBe(0);
    expect(JSON.parse(readFileSync(file, 'utf8')).outputs.marker.value).toBe('second');

    const rolled = await runTrellis(['configs', 'state', 'rollback', 'hist', String(first), '--json'], {
      env: home.env(),
    });
    expect(rolled.code, rolled.stderr).toBe(0);
    expect(JSON.parse(rolled.stdout).serial).toBe(3);
    const current = await runTrellis(['configs', 'state', 'pull', 'hist'], { env: home.env() });
    expect(JSON.parse(current.stdout)).toMatchObject({ serial: 3, outputs: { marker: { value: 'first' } } });

    // The configuration's page shows the same history, with a rollback button for admins (the personal owner here).
    const page = await fetch(`${server.url}/configurations/${String(ws.data.id).slice(3)}`, {
      headers: { cookie: await server.sessionCookie() },
    });
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain('data-state-versions');
    expect(html.match(/data-state-rollback="/g)).toHaveLength(2);
    expect(html).toContain('<span class="muted">free</span>');

    const bad = await runTrellis(['configs', 'state', 'rollback', 'hist', 'latest'], { env: home.env() });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('"latest" is not a state version number');
  }, 60_000);
});
