import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TrellisClient } from '@trellis/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: the example is plain JavaScript, as a team's server would be.
import { startExample } from '../server.mjs';

describe('examples/embed-express', () => {
  let example: { url: string; close(): Promise<void> };
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'trellis-embed-'));
    example = await startExample({
      port: 0,
      env: {
        TRELLIS_DATA_DIR: dataDir,
        TRELLIS_BOOTSTRAP_TOKEN: 'embed-bootstrap-token-0123456789abcdef',
        TRELLIS_LOG_LEVEL: 'silent',
      },
    });
  });
  afterAll(async () => {
    await example?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps the host application routes', async () => {
    const response = await fetch(`${example.url}/`);
    expect(await response.text()).toBe('my platform portal\n');
  });

  it('serves the control plane under the prefix', async () => {
    expect((await fetch(`${example.url}/trellis/healthz`)).status).toBe(200);
    expect((await fetch(`${example.url}/trellis/readyz`)).status).toBe(200);
    const doc = (await (await fetch(`${example.url}/trellis/api/openapi.json`)).json()) as { openapi: string };
    expect(doc.openapi).toBe('3.1.0');
  });

  it('signs in and answers the API through the prefix', async () => {
    const signIn = await fetch(`${example.url}/trellis/auth/bootstrap?token=embed-bootstrap-token-0123456789abcdef`, {
      redirect: 'manual',
    });
    expect(signIn.status).toBe(303);
    expect(signIn.headers.get('location')).toBe('/trellis/');
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const client = new TrellisClient({
      baseUrl: `${example.url}/trellis`,
      auth: { kind: 'cookie', cookie, origin: new URL(example.url).origin },
    });
    const vineyard = await client.createVineyard('embedded');
    expect((await client.listVineyards()).map((v) => v.id)).toEqual([vineyard.id]);

    // The next page's link keeps the prefix the control plane is mounted under.
    const older = await client.createVineyard('embedded-2');
    const page = await fetch(`${example.url}/trellis/api/cli/vineyards?limit=1`, { headers: { cookie } });
    const link = page.headers.get('link') ?? '';
    expect(link).toMatch(/^<\/trellis\/api\/cli\/vineyards\?limit=1&cursor=[\w-]+>; rel="next"$/);
    const next = await fetch(new URL(link.slice(1, link.indexOf('>')), example.url), { headers: { cookie } });
    expect(((await next.json()) as { vineyards: { id: string }[] }).vineyards.map((v) => v.id)).toEqual([vineyard.id]);
    expect(older.id).not.toBe(vineyard.id);
  });
});
