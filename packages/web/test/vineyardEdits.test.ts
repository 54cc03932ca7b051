/**
 * The create and delete forms of vineyards and configurations (issue 29) below the browser: how a
 * submitted form becomes the API's body for core to judge, and the routes over HTTP against a real
 * control plane (sign-in, the Origin rule, a 303 to the new record, a refusal as core's problem with
 * its status, and no sensitive value in any answer).
 */
import type { TrellisClient } from '@trellis/client';
import { ConflictError, InsufficientRoleError, NotFoundError, ValidationError } from '@trellis/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusalOf } from '../src/vineyardEdits/refusal.js';
import { createVineInput, shownAgain, vineFormValues } from '../src/vineyardEdits/vineForm.js';
import { MAIN_TF, WebServer } from './support/webServer.js';

const VINEYARD = '7f1c4d52-0a57-4e0e-9a0e-3c1b0f3e6a11';
const SECRET = 'sk-live-do-not-echo';

describe('the new-configuration form', () => {
  it('becomes the body of POST /api/cli/configurations: rows by index, empty rows dropped, CRLF as typed', () => {
    const values = vineFormValues({
      name: 'web',
      project_name: '',
      source_type: 'inline',
      'files.1.name': 'variables.tf',
      'files.1.content': 'variable "a" {}\r\n',
      'files.0.name': 'main.tf',
      'files.0.content': 'output "x" {\r\n  value = 1\r\n}\r\n',
      'files.2.name': '',
      'files.2.content': '',
      'variables.0.name': 'region',
      'variables.0.value': 'eu-west-1',
      'variables.1.name': 'token',
      'variables.1.value': SECRET,
      'variables.1.sensitive': 'true',
      'variables.2.name': '',
      'variables.2.value': '',
      engine: 'terraform',
      engine_version: '1.9.8',
      approval: 'separate',
    });
    expect(createVineInput(VINEYARD, values)).toEqual({
      name: 'web',
      vineyard_id: VINEYARD,
      source: {
        type: 'inline',
        files: { 'main.tf': 'output "x" {\n  value = 1\n}\n', 'variables.tf': 'variable "a" {}\n' },
      },
      variables: { region: { value: 'eu-west-1', sensitive: false }, token: { value: SECRET, sensitive: true } },
      engine: { name: 'terraform', version: '1.9.8' },
      approval: { required: true, separate_approver: true },
    });
  });

  it('sends a Git source with only the parts given, and leaves out what the form did not send', () => {
    const values = vineFormValues({ name: 'infra', source_type: 'git', git_url: 'https://example.com/a.git' });
    expect(createVineInput(VINEYARD, values)).toEqual({
      name: 'infra',
      vineyard_id: VINEYARD,
      source: { type: 'git', url: 'https://example.com/a.git' },
      variables: {},
    });
  });

  it("sends tags split on commas and spaces, the run triggers, and only the chosen identity kind's fields", () => {
    const upstream = '0b5a3b8e-8f43-4c55-9d33-5b6f3f2c1a10';
    const values = vineFormValues({
      name: 'web',
      source_type: 'git',
      git_url: 'https://example.com/a.git',
      tags: ' prod,team:web  eu ,',
      triggers_after: [upstream],
      identity_kind: 'oidc_aws',
      identity_role_arn: ' arn:aws:iam::123456789012:role/deploy ',
      identity_session_duration: '1800',
      identity_workload_identity_provider: 'left over from another kind',
      identity_external_id: 'not sent either',
    });
    expect(createVineInput(VINEYARD, values)).toMatchObject({
      tags: ['prod', 'team:web', 'eu'],
      triggers: { after: [upstream] },
      cloud_identity: {
        kind: 'oidc',
        provider: 'aws',
        role_arn: 'arn:aws:iam::123456789012:role/deploy',
        session_duration: 1800,
      },
    });
    expect(Object.keys(createVineInput(VINEYARD, values).cloud_identity as object).sort()).toEqual([
      'kind',
      'provider',
      'role_arn',
      'session_duration',
    ]);
    const existing = vineFormValues({ ...values, identity_kind: 'existing', identity_id: upstream });
    expect(createVineInput(VINEYARD, existing)).toMatchObject({ cloud_identity_id: upstream });
    expect(createVineInput(VINEYARD, existing)).not.toHaveProperty('cloud_identity');
    const none = vineFormValues({ name: 'web', source_type: 'git', git_url: 'https://example.com/a.git', tags: ' ' });
    expect(createVineInput(VINEYARD, none)).not.toHaveProperty('tags');
    expect(createVineInput(VINEYARD, none)).not.toHaveProperty('cloud_identity');
  });

  it('refuses an upload source with nothing uploaded, before core', () => {
    const values = vineFormValues({ name: 'web', source_type: 'upload' });
    expect(() => createVineInput(VINEYARD, values)).toThrow(ValidationError);
    const carried = vineFormValues({
      name: 'web',
      source_type: 'upload',
      'uploads.0.name': 'main.tf',
      'uploads.0.content': 'terraform {}\r\n',
    });
    expect(createVineInput(VINEYARD, carried).source).toEqual({
      type: 'inline',
      files: { 'main.tf': 'terraform {}\n' },
    });
  });

  it('refuses a file or variable name given twice (JSON cannot say it; the second would replace the first)', () => {
    const values = vineFormValues({
      name: 'web',
      source_type: 'inline',
      'files.0.name': 'main.tf',
      'files.0.content': 'a',
      'files.1.name': 'main.tf',
      'files.1.content': 'b',
    });
    expect(() => createVineInput(VINEYARD, values)).toThrow(ValidationError);
    try {
      createVineInput(VINEYARD, values);
    } catch (error) {
      expect((error as ValidationError).fields).toEqual([
        { path: 'source.files.main.tf', message: 'is given twice: one file per name' },
      ]);
    }
  });

  it('is shown again with everything typed but sensitive values', () => {
    const values = vineFormValues({
      'variables.0.name': 'token',
      'variables.0.value': SECRET,
      'variables.0.sensitive': 'true',
      'variables.1.name': 'region',
      'variables.1.value': 'eu-west-1',
    });
    expect(shownAgain(values).variables).toEqual([
      { name: 'token', value: '', sensitive: true },
      { name: 'region', value: 'eu-west-1', sensitive: false },
    ]);
    expect(JSON.stringify(shownAgain(values))).not.toContain(SECRET);
  });
});

describe('a refusal', () => {
  it("takes its status from core's problem registry, with the field issues", () => {
    expect(refusalOf(new ValidationError('bad', [{ path: 'name', message: 'no' }]))).toEqual({
      status: 400,
      code: 'validation_failed',
      detail: 'bad',
      fields: [{ path: 'name', message: 'no' }],
    });
    expect(refusalOf(new InsufficientRoleError('admin', 'viewer'))).toMatchObject({
      status: 403,
      code: 'insufficient_role',
    });
    expect(refusalOf(new ConflictError('vineyard_not_empty', 'still holds'))).toMatchObject({ status: 409 });
  });

  it('is not a missing record, nor an error core did not raise', () => {
    expect(() => refusalOf(new NotFoundError('vineyard'))).toThrow(NotFoundError);
    expect(() => refusalOf(new Error('boom'))).toThrow('boom');
  });
});

describe('the create and delete routes', () => {
  let server: WebServer;
  let cookie: string;
  let user: TrellisClient;
  let origin: string;

  const post = (path: string, body: Record<string, string>, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { cookie, origin, 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(body).toString(),
      redirect: 'manual',
    });

  beforeAll(async () => {
    server = await new WebServer().start();
    cookie = await server.sessionCookie();
    user = await server.userClient();
    origin = new URL(server.url).origin;
  });
  afterAll(async () => {
    await server?.close();
  });

  it('sends a signed-out visitor to sign in, and refuses a form from another site before any change', async () => {
    const page = await fetch(`${server.url}/vineyards/new`, { redirect: 'manual' });
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe(`/signin?next=${encodeURIComponent('/vineyards/new')}`);
    const crossSite = await post('/vineyards', { name: 'evil' }, { origin: 'http://evil.example' });
    expect(crossSite.status).toBe(403);
    expect(await crossSite.text()).toContain('Request refused');
    expect((await user.listVineyards()).map((vineyard) => vineyard.name)).not.toContain('evil');
  });

  it('creates a vineyard and a configuration, each answered by a 303 to its page', async () => {
    const vineyard = await post('/vineyards', { name: 'routes', org_id: '' });
    expect(vineyard.status).toBe(303);
    const vineyardId = vineyard.headers.get('location')?.split('/')[2] as string;
    expect((await user.getVineyard(vineyardId)).name).toBe('routes');

    const vine = await post(`/vineyards/${vineyardId}/configurations`, {
      name: 'routes-web',
      source_type: 'inline',
      'files.0.name': 'main.tf',
      'files.0.content': MAIN_TF,
      engine: 'tofu',
      approval: 'none',
    });
    expect(vine.status).toBe(303);
    expect(vine.headers.get('location')).toMatch(/^\/configurations\/[0-9a-f-]{36}$/);
  });

  it('answers a refused configuration with its problem, the fields as typed, and no sensitive value', async () => {
    const vineyardId = (await user.createVineyard('refusals')).id;
    const response = await post(`/vineyards/${vineyardId}/configurations`, {
      name: 'Not a name!',
      source_type: 'inline',
      'files.0.name': 'main.tf',
      'files.0.content': '# kept <as> typed',
      'variables.0.name': 'token',
      'variables.0.value': SECRET,
      'variables.0.sensitive': 'true',
      engine: 'tofu',
      approval: 'none',
    });
    expect(response.status).toBe(400);
    const body = await response.text();
    expect(body).toContain('data-form-error="validation_failed"');
    expect(body).toContain('data-field-error="vine-name"');
    expect(body).toContain('value="Not a name!"');
    expect(body).toContain('# kept &lt;as&gt; typed');
    expect(body).toContain('data-sensitive-dropped');
    expect(body).not.toContain(SECRET);
  });

  it('adds a row without creating anything, and refuses a delete whose name was not typed', async () => {
    const vineyardId = (await user.createVineyard('rows')).id;
    const more = await post(`/vineyards/${vineyardId}/configurations`, {
      intent: 'add_file',
      name: 'rows-web',
      source_type: 'inline',
      'files.0.name': 'main.tf',
      'files.0.content': MAIN_TF,
    });
    expect(more.status).toBe(200);
    expect(await more.text()).toContain('id="file-1-name"');
    expect((await user.getVineyard(vineyardId)).vines).toEqual([]);

    const untyped = await post(`/vineyards/${vineyardId}/delete`, { confirm: 'not-it' });
    expect(untyped.status).toBe(400);
    expect(await untyped.text()).toContain('data-field-error="delete-confirm"');
    expect((await user.getVineyard(vineyardId)).name).toBe('rows');
    const deleted = await post(`/vineyards/${vineyardId}/delete`, { confirm: 'rows' });
    expect(deleted.status).toBe(303);
    expect(deleted.headers.get('location')).toBe('/vineyards');
  });

  it("refuses to delete a configuration with a queued job, with core's message", async () => {
    const vineyard = await user.createVineyard('busy');
    const vine = await user.createConfiguration({
      name: 'busy-web',
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': MAIN_TF } },
    });
    const job = await user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
    const busy = await post(`/configurations/${vine.id}/delete`, { confirm: 'busy-web' });
    expect(busy.status).toBe(409);
    const body = await busy.text();
    expect(body).toContain('data-form-error="configuration_busy"');
    expect(body).toContain(`has a queued or running job (${job.id})`);
    expect((await user.getConfiguration(vine.id)).id).toBe(vine.id);
  });
});
