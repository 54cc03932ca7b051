import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ApiHarness, cliTokens, json, startApi } from './harness.js';

let api: ApiHarness;
let auth: { authorization: string };
beforeEach(async () => {
  api = await startApi();
  auth = { authorization: `Bearer ${(await cliTokens(api)).access_token}` };
});
afterEach(async () => {
  await api.close();
});

describe('request handling', () => {
  it('answers malformed JSON with 400 malformed_json', async () => {
    const response = await fetch(`${api.url}/api/cli/vineyards`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: '{"name": ',
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 'malformed_json', status: 400 });
  });

  it('refuses text/plain and form bodies on JSON endpoints with 415', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
      const response = await fetch(`${api.url}/api/cli/vineyards`, {
        method: 'POST',
        headers: { ...auth, 'content-type': type },
        body: type === 'text/plain' ? '{"name":"x"}' : 'name=x',
      });
      expect(response.status, type).toBe(415);
      expect((await response.json()).code).toBe('unsupported_media_type');
    }
  });

  it('refuses oversized bodies with 413', async () => {
    const response = await fetch(`${api.url}/api/cli/vineyards`, json({ name: 'x'.repeat(2 * 1024 * 1024) }, auth));
    expect(response.status).toBe(413);
    expect((await response.json()).code).toBe('payload_too_large');
  });

  it('answers a non-UUID id with 400 naming the field', async () => {
    const response = await fetch(`${api.url}/api/cli/vineyards/not-a-uuid`, { headers: auth });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.code).toBe('validation_failed');
    expect(body.errors[0].path).toBe('path.id');
  });

  it('answers an unknown enum value with 400', async () => {
    const response = await fetch(`${api.url}/api/jobs`, json({ job_type: 'EXPLODE' }, auth));
    expect(response.status).toBe(400);
    expect((await response.json()).errors[0].path).toBe('body.job_type');
  });

  it('says what is wrong with a field in words, once: no schema wording, no regular expression', async () => {
    const patch = (body: unknown) =>
      fetch(`${api.url}/api/cli/configurations/web`, { ...json(body, auth), method: 'PATCH' });
    const tooOften = await (await patch({ drift_detection: { interval_minutes: 30 } })).json();
    expect(tooOften).toMatchObject({
      code: 'validation_failed',
      detail: 'drift_detection.interval_minutes must be at least 60 minutes',
      errors: [{ path: 'body.drift_detection.interval_minutes', message: 'must be at least 60 minutes' }],
    });
    const fraction = await (await patch({ drift_detection: { interval_minutes: 90.5 } })).json();
    expect(fraction.detail).toBe('drift_detection.interval_minutes must be a whole number of minutes');
    const wrongType = await (await patch({ drift_detection: { interval_minutes: 'often' } })).json();
    expect(wrongType.detail).toBe('drift_detection.interval_minutes must be a number');
    const tooMany = await (await patch({ triggers: { after: ['x'] } })).json();
    expect(tooMany.errors).toEqual([{ path: 'body.triggers.after.0', message: 'must be a UUID' }]);

    const job = await (await fetch(`${api.url}/api/jobs`, json({ job_type: 'EXPLODE' }, auth))).json();
    expect(job.errors).toContainEqual({
      path: 'body.job_type',
      message: 'must be one of PLAN, DEPLOY, DESTROY, DESTROY_WORKER',
    });
    expect(job.detail).toContain('job_type must be one of PLAN, DEPLOY, DESTROY, DESTROY_WORKER');
    const name = await (await fetch(`${api.url}/api/cli/vineyards`, json({ name: 'bad name!' }, auth))).json();
    expect(name).toMatchObject({
      detail: "name must be 1 to 100 letters, digits, '.', '_' or '-', starting with a letter or digit",
      errors: [
        { path: 'name', message: "must be 1 to 100 letters, digits, '.', '_' or '-', starting with a letter or digit" },
      ],
    });
    for (const body of [tooOften, fraction, wrongType, tooMany, job, name]) {
      expect(JSON.stringify(body)).not.toMatch(/Too small|Invalid|expected|\^\[|\$"|body\.[a-z_.]+ /);
    }
  });

  it('stores SQL-looking strings literally', async () => {
    const name = "x'; DROP TABLE vineyards; --";
    const response = await fetch(`${api.url}/api/cli/vineyards`, json({ name }, auth));
    // Names are restricted to a safe alphabet, so this is refused cleanly rather than stored.
    expect(response.status).toBe(400);
    const ok = await fetch(`${api.url}/api/cli/vineyards`, json({ name: 'robert-tables' }, auth));
    expect(ok.status).toBe(201);
  });

  it('answers unknown API routes with a problem', async () => {
    const response = await fetch(`${api.url}/api/nothing-here`, { headers: auth });
    expect(response.status).toBe(404);
    expect((await response.json()).code).toBe('route_not_found');
  });

  it('echoes or assigns a request id, and puts it in problems', async () => {
    const response = await fetch(`${api.url}/api/cli/vineyards/not-a-uuid`, {
      headers: { ...auth, 'x-request-id': 'req-42' },
    });
    expect(response.headers.get('x-request-id')).toBe('req-42');
    expect((await response.json()).request_id).toBe('req-42');
  });

  it('serves health, readiness and the OpenAPI document', async () => {
    expect((await fetch(`${api.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${api.url}/readyz`)).status).toBe(200);
    api.core.uow.setUnavailable();
    const notReady = await fetch(`${api.url}/readyz`);
    expect(notReady.status).toBe(503);
    expect(notReady.headers.get('retry-after')).toBe('1');
    const doc = (await (await fetch(`${api.url}/api/openapi.json`)).json()) as {
      openapi: string;
      paths: Record<string, Record<string, { operationId: string; requestBody?: unknown }>>;
    };
    expect(doc.openapi).toBe('3.1.0');
    const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    for (const expected of [
      'POST /api/auth/cli/generate',
      'POST /api/auth/cli/exchange',
      'POST /api/auth/cli/refresh',
      'POST /api/jobs/claim',
      'POST /api/workers/heartbeat',
      'PUT /api/jobs/{id}/status',
      'POST /api/jobs/{id}/logs',
      'GET /api/jobs/{id}/logs',
      'POST /api/jobs/{id}/plan-artifact',
      'GET /api/jobs/{id}/plan-artifact',
      'POST /api/workers/register',
      'GET /api/workers/{id}',
      'POST /api/workers/{id}/metadata',
      'GET /api/cli/vineyards',
      'POST /api/cli/vineyards',
      'GET /api/cli/vineyards/{id}',
      'GET /api/cli/configurations',
      'GET /api/cli/configurations/{name}',
      'GET /api/cli/configurations/by-project-name/{project_name}',
      'POST /api/cli/configurations',
      'POST /api/jobs',
      'GET /api/jobs',
      'GET /api/cli/jobs/{id}',
      'GET /api/cli/jobs/{id}/logs',
      'POST /api/cli/jobs/{id}/cancel',
      'GET /api/cli/workers',
      'POST /api/cli/workers',
      'GET /api/cli/workers/{id}',
      'POST /api/releases/worker',
      'POST /api/tendrils/register',
      'GET /api/jobs/{id}/logs/stream',
    ]) {
      expect(operations).toContain(expected);
    }
    const createJob = doc.paths['/api/jobs']?.post as {
      requestBody: { content: Record<string, { schema: { properties: object } }> };
    };
    expect(Object.keys(createJob.requestBody.content['application/json']?.schema.properties ?? {})).toContain(
      'job_type',
    );
  });
});
