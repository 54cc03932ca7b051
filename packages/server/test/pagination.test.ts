import type { TrellisClient } from '@trellis/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  INLINE_MAIN_TF,
  type RunningControlPlane,
  startControlPlane,
  vineyardWithConfiguration,
} from './support/controlPlane.js';
import { describeEachDialect } from './support/dialects.js';

interface ListAnswer {
  status: number;
  link: string | null;
  body: Record<string, unknown>;
}

/** The target of `Link: <…>; rel="next"`, resolved against the request URL (RFC 8288). */
function nextLink(link: string | null, requestUrl: string): string | null {
  if (link === null) return null;
  const match = /^<([^>]*)>;\s*rel="next"$/.exec(link);
  expect(match, `a single rel="next" link: ${link}`).not.toBeNull();
  return new URL(match?.[1] ?? '', requestUrl).toString();
}

describeEachDialect('lists page through a cursor and a Link header (issue 10 §2)', (dialect) => {
  let server: RunningControlPlane;
  let alice: TrellisClient;
  let token: string;
  let configurationId: string;
  let vineyardId: string;

  const get = async (pathOrUrl: string): Promise<ListAnswer> => {
    const url = pathOrUrl.startsWith('http') ? pathOrUrl : `${server.url}${pathOrUrl}`;
    const response = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
    return {
      status: response.status,
      link: response.headers.get('link'),
      body: (await response.json()) as Record<string, unknown>,
    };
  };
  const queuePlan = async () => (await alice.createJob({ job_type: 'PLAN', configuration_id: configurationId })).id;

  beforeAll(async () => {
    server = await startControlPlane(dialect);
    alice = await server.userClient('alice@example.com');
    token = await server.accessToken('alice@example.com');
    const { vineyard, configuration } = await vineyardWithConfiguration(alice, 'paged');
    configurationId = configuration.id;
    vineyardId = vineyard.id;
  });
  afterAll(async () => {
    await server?.close();
  });

  it('walks every job exactly once, newest first, following Link while jobs keep arriving', async () => {
    const before: string[] = [];
    for (let i = 0; i < 7; i++) before.push(await queuePlan());
    const arrived: string[] = [];
    const seen: string[] = [];
    let url: string | null = `${server.url}/api/jobs?limit=3&status=QUEUED&vineyard_id=${vineyardId}`;
    let pages = 0;
    while (url !== null) {
      const answer = await get(url);
      expect(answer.status).toBe(200);
      const jobs = answer.body.jobs as { id: string; status: string; vineyard_id: string }[];
      expect(jobs.length).toBeLessThanOrEqual(3);
      for (const job of jobs) expect(job).toMatchObject({ status: 'QUEUED', vineyard_id: vineyardId });
      seen.push(...jobs.map((job) => job.id));
      const next = nextLink(answer.link, url);
      if (next !== null) {
        // The filters and the page size travel in the link.
        const params = new URL(next).searchParams;
        expect(params.get('status')).toBe('QUEUED');
        expect(params.get('vineyard_id')).toBe(vineyardId);
        expect(params.get('limit')).toBe('3');
        expect(params.get('cursor')).toMatch(/^[A-Za-z0-9_-]+$/);
      }
      arrived.push(await queuePlan());
      url = next;
      pages++;
    }
    expect(pages).toBe(3);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual([...before].reverse());
    // The walk saw nothing that arrived after it began; a new walk starts with those.
    const fresh = await alice.listJobsPage({ limit: arrived.length });
    expect(fresh.items.map((job) => job.id)).toEqual([...arrived].reverse());
    expect(fresh.next_cursor).not.toBeNull();
  });

  it('the client walks every page with its iterator', async () => {
    const all = await alice.listJobs();
    const first = await alice.listJobsPage({ limit: 2 });
    expect(first.items.map((job) => job.id)).toEqual(all.slice(0, 2).map((job) => job.id));
    const walked: string[] = [];
    for await (const job of alice.jobs({ limit: 4 })) walked.push(job.id);
    expect(walked).toEqual(all.map((job) => job.id));
    expect(all.length).toBeGreaterThan(4);
  });

  it('announces no next page on the last one', async () => {
    const answer = await get('/api/jobs?limit=200');
    expect(answer.status).toBe(200);
    expect(answer.link).toBeNull();
    const defaulted = await get('/api/jobs');
    expect((defaulted.body.jobs as unknown[]).length).toBeLessThanOrEqual(50);
  });

  it.each([
    ['limit=0', '/api/jobs?limit=0'],
    ['limit=201', '/api/jobs?limit=201'],
    ['limit=ten', '/api/jobs?limit=ten'],
    ['a garbage cursor', '/api/jobs?cursor=not-a-cursor'],
    ['a cursor of another shape', `/api/jobs?cursor=${Buffer.from('{"a":1}').toString('base64url')}`],
    ['a garbage cursor on vineyards', '/api/cli/vineyards?cursor=%%%'],
    ['limit=201 on workers', '/api/cli/workers?limit=201'],
    ['limit=0 on configurations', '/api/cli/configurations?limit=0'],
    ['limit=0 on releases', '/api/releases/worker?limit=0'],
  ])('refuses %s with 400 validation_failed', async (_name, path) => {
    const answer = await get(path);
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe('validation_failed');
  });

  it('lists summaries without files or variables; the job detail keeps the whole snapshot', async () => {
    const id = await queuePlan();
    const answer = await get('/api/jobs?limit=1');
    const [listed] = answer.body.jobs as { id: string; config_snapshot: Record<string, unknown> }[];
    expect(listed?.id).toBe(id);
    expect(listed?.config_snapshot.source).toEqual({ type: 'inline', file_count: 1 });
    expect(listed?.config_snapshot).not.toHaveProperty('variables');
    expect(JSON.stringify(answer.body)).not.toContain('variable "greeting"');
    const detail = await alice.getJob(id);
    expect(detail.config_snapshot.source).toEqual({ type: 'inline', files: { 'main.tf': INLINE_MAIN_TF } });
    expect(detail.config_snapshot.variables.greeting).toEqual({ value: 'hi', sensitive: false });
    for (const path of ['/api/cli/configurations', '/api/cli/vineyards']) {
      const text = JSON.stringify((await get(path)).body);
      expect(text, path).toContain('paged');
      expect(text, path).not.toContain('variable "greeting"');
      expect(text, path).not.toContain('"variables"');
    }
  });

  it('keeps a list small however large the inline configuration (the 202 MB answer of the issue)', async () => {
    const big = `# ${'x'.repeat(1024 * 1024)}\n`;
    const yard = await alice.createVineyard('big-yard');
    const vine = await alice.createConfiguration({
      name: 'big',
      vineyard_id: yard.id,
      source: { type: 'inline', files: { 'main.tf': INLINE_MAIN_TF, 'big.tf': big } },
    });
    for (let i = 0; i < 8; i++) await alice.createJob({ job_type: 'PLAN', configuration_id: vine.id });
    const response = await fetch(`${server.url}/api/jobs?vineyard_id=${yard.id}&limit=200`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    const text = await response.text();
    expect((JSON.parse(text) as { jobs: unknown[] }).jobs).toHaveLength(8);
    expect(text.length).toBeLessThan(64 * 1024);
    for (const path of ['/api/cli/configurations?limit=200', '/api/cli/vineyards?limit=200']) {
      expect(
        (await (await fetch(`${server.url}${path}`, { headers: { Authorization: `Bearer ${token}` } })).text()).length,
        path,
      ).toBeLessThan(64 * 1024);
    }
  });

  it('pages vineyards, configurations and workers the same way', async () => {
    for (let i = 0; i < 3; i++) {
      await vineyardWithConfiguration(alice, `more-${i}`);
      await server.agentClient(alice, `agent-${i}`);
    }
    for (const [path, key] of [
      ['/api/cli/vineyards', 'vineyards'],
      ['/api/cli/configurations', 'configurations'],
      ['/api/cli/workers', 'workers'],
    ] as const) {
      const everything = ((await get(`${path}?limit=200`)).body[key] as { id: string }[]).map((item) => item.id);
      const seen: string[] = [];
      let url: string | null = `${server.url}${path}?limit=1`;
      while (url !== null) {
        const answer = await get(url);
        seen.push(...(answer.body[key] as { id: string }[]).map((item) => item.id));
        url = nextLink(answer.link, url);
      }
      expect(seen, path).toEqual(everything);
      expect(seen.length, path).toBeGreaterThanOrEqual(3);
    }
  });
});

describe('the page limits are settings', () => {
  it('takes TRELLIS_PAGE_LIMIT_DEFAULT and TRELLIS_PAGE_LIMIT_MAX', async () => {
    const server = await startControlPlane('sqlite', {
      env: { TRELLIS_PAGE_LIMIT_DEFAULT: '2', TRELLIS_PAGE_LIMIT_MAX: '5' },
    });
    try {
      const alice = await server.userClient('alice@example.com');
      const token = await server.accessToken('alice@example.com');
      for (let i = 0; i < 3; i++) await alice.createVineyard(`yard-${i}`);
      const get = (path: string) => fetch(`${server.url}${path}`, { headers: { Authorization: `Bearer ${token}` } });
      const first = await get('/api/cli/vineyards');
      expect(((await first.json()) as { vineyards: unknown[] }).vineyards).toHaveLength(2);
      expect(first.headers.get('link')).toMatch(/limit=2>; rel="next"$/);
      expect((await get('/api/cli/vineyards?limit=5')).status).toBe(200);
      const tooMany = await get('/api/cli/vineyards?limit=6');
      expect(tooMany.status).toBe(400);
      expect(((await tooMany.json()) as { code: string }).code).toBe('validation_failed');
    } finally {
      await server.close();
    }
  });
});

describe('the Link of a list mounted under a prefix', () => {
  it('keeps the prefix', async () => {
    const { default: express } = await import('express');
    const { pagedList } = await import('@trellis/http');
    const app = express();
    const router = express.Router();
    router.get('/api/jobs', (req, res) => {
      const result = pagedList(req, 'jobs', { items: [], limit: 7, next_cursor: 'abc' });
      for (const [name, value] of Object.entries(result?.headers ?? {})) res.setHeader(name, value);
      res.status(200).json(result?.body);
    });
    app.use('/trellis', router);
    const listening = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => listening.once('listening', resolve));
    try {
      const address = listening.address() as { port: number };
      const response = await fetch(`http://127.0.0.1:${address.port}/trellis/api/jobs?status=QUEUED&cursor=old`);
      expect(response.headers.get('link')).toBe('</trellis/api/jobs?status=QUEUED&cursor=abc&limit=7>; rel="next"');
    } finally {
      listening.close();
    }
  });
});
