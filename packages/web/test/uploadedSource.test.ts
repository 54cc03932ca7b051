/**
 * A directory uploaded in the new-configuration form (issue 29) below the browser: the multipart
 * form over HTTP against a real control plane. Paths stay relative to the chosen directory, what is
 * no part of a configuration is left out, and the limits core applies to inline files are the
 * upload's: a file that is not UTF-8 text or more than 5 MiB together is refused beside the field,
 * with the form as typed, and nothing is created.
 */
import { MAX_INLINE_SOURCE_BYTES } from '@trellis/core';
import { MAX_MULTIPART_BYTES, MAX_UPLOAD_PARTS } from '../src/vineyardEdits/multipartForm.js';
import type { TrellisClient } from '@trellis/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIN_TF, WebServer } from './support/webServer.js';

describe('an uploaded directory as a configuration source', () => {
  let server: WebServer;
  let cookie: string;
  let user: TrellisClient;
  let origin: string;
  let vineyardId: string;

  /** The form as a browser posts it: fields, then the files of the directory input under their relative paths. */
  const post = (fields: Record<string, string>, files: { path: string; content: string | Uint8Array }[]) => {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    for (const file of files) form.append('upload', new Blob([file.content]), file.path);
    return fetch(`${server.url}/vineyards/${vineyardId}/configurations`, {
      method: 'POST',
      headers: { cookie, origin },
      body: form,
      redirect: 'manual',
    });
  };

  beforeAll(async () => {
    server = await new WebServer().start();
    cookie = await server.sessionCookie();
    user = await server.userClient();
    origin = new URL(server.url).origin;
    vineyardId = (await user.createVineyard('uploads')).id;
  });
  afterAll(async () => {
    await server?.close();
  });

  it('keeps the paths inside the chosen directory and leaves out what is no part of a configuration', async () => {
    const answer = await post({ name: 'web', source_type: 'upload', tags: 'a, b' }, [
      { path: 'infra/main.tf', content: MAIN_TF },
      { path: 'infra/modules/net/main.tf', content: 'variable "x" {}\r\n' },
      { path: 'infra/.terraform.lock.hcl', content: '# lock\n' },
      { path: 'infra/.terraform/modules/modules.json', content: '{}' },
      { path: 'infra/node_modules/x/main.tf', content: 'nope' },
      { path: 'infra/terraform.tfstate', content: '{}' },
      { path: 'infra/.env', content: 'SECRET=1' },
    ]);
    expect(answer.status).toBe(303);
    const vine = await user.getConfiguration('web');
    // A file's bytes as on disk (CRLF kept), unlike a text area's.
    expect(vine.source).toEqual({
      type: 'inline',
      files: { '.terraform.lock.hcl': '# lock\n', 'main.tf': MAIN_TF, 'modules/net/main.tf': 'variable "x" {}\r\n' },
    });
    expect(vine.tags).toEqual(['a', 'b']);
  });

  it('refuses a file that is not UTF-8 text beside the field, keeping what was typed', async () => {
    const answer = await post({ name: 'binary', source_type: 'upload', tags: 'kept' }, [
      { path: 'infra/main.tf', content: MAIN_TF },
      { path: 'infra/data.tfvars', content: new Uint8Array([0xff, 0xfe, 0x00, 0x41]) },
    ]);
    expect(answer.status).toBe(400);
    const html = await answer.text();
    expect(html).toContain('data-field-error="vine-upload"');
    expect(html).toContain('data.tfvars is not UTF-8 text');
    expect(html).toContain('value="binary"');
    expect(html).toContain('value="kept"');
    expect((await user.listConfigurations()).map((vine) => vine.name)).not.toContain('binary');
  });

  it('pays no heed to a directory chosen when another source is', async () => {
    const answer = await post(
      {
        name: 'from-files',
        source_type: 'inline',
        'files.0.name': 'main.tf',
        'files.0.content': MAIN_TF,
      },
      [{ path: 'infra/data.tfvars', content: new Uint8Array([0xff, 0xfe]) }],
    );
    expect(answer.status).toBe(303);
    expect((await user.getConfiguration('from-files')).source).toEqual({
      type: 'inline',
      files: { 'main.tf': MAIN_TF },
    });
  });

  it(`refuses more than ${MAX_INLINE_SOURCE_BYTES} bytes together, the limit of inline files`, async () => {
    const half = 'x'.repeat(MAX_INLINE_SOURCE_BYTES / 2);
    const answer = await post({ name: 'big', source_type: 'upload' }, [
      { path: 'infra/a.tf', content: half },
      { path: 'infra/b.tf', content: half },
      { path: 'infra/c.tf', content: 'x' },
    ]);
    expect(answer.status).toBe(400);
    const html = await answer.text();
    expect(html).toContain(`holds more than ${MAX_INLINE_SOURCE_BYTES} bytes of configuration`);
    expect((await user.listConfigurations()).map((vine) => vine.name)).not.toContain('big');
    // Exactly the limit is accepted.
    const fits = await post({ name: 'fits', source_type: 'upload' }, [
      { path: 'infra/a.tf', content: half },
      { path: 'infra/b.tf', content: half },
    ]);
    expect(fits.status).toBe(303);
  });

  it(`refuses a directory of more than ${MAX_UPLOAD_PARTS} files rather than drop some unsaid`, async () => {
    const files = Array.from({ length: MAX_UPLOAD_PARTS }, (_, index) => ({
      path: `infra/docs/${index}.md`,
      content: '',
    }));
    const answer = await post({ name: 'crowded', source_type: 'upload' }, [
      ...files,
      { path: 'infra/main.tf', content: MAIN_TF },
    ]);
    expect(answer.status).toBe(400);
    expect(await answer.text()).toContain(`holds more than ${MAX_UPLOAD_PARTS} files`);
    expect((await user.listConfigurations()).map((vine) => vine.name)).not.toContain('crowded');
  });

  it(`stops reading a form over ${MAX_MULTIPART_BYTES} bytes and says so beside the field`, async () => {
    const answer = await post({ name: 'huge', source_type: 'upload' }, [
      { path: 'infra/main.tf', content: MAIN_TF },
      { path: 'infra/.terraform/providers/terraform-provider-big', content: new Uint8Array(MAX_MULTIPART_BYTES) },
    ]);
    expect(answer.status).toBe(400);
    const html = await answer.text();
    expect(html).toContain('data-field-error="vine-upload"');
    expect(html).toContain(`is more than ${MAX_MULTIPART_BYTES / 1024 / 1024} MiB`);
    expect((await user.listConfigurations()).map((vine) => vine.name)).not.toContain('huge');
  });

  it('refuses a form from another site before reading it', async () => {
    const form = new FormData();
    form.append('name', 'evil');
    form.append('source_type', 'upload');
    form.append('upload', new Blob([MAIN_TF]), 'infra/main.tf');
    const answer = await fetch(`${server.url}/vineyards/${vineyardId}/configurations`, {
      method: 'POST',
      headers: { cookie, origin: 'http://evil.example' },
      body: form,
      redirect: 'manual',
    });
    expect(answer.status).toBe(403);
    expect((await user.listConfigurations()).map((vine) => vine.name)).not.toContain('evil');
  });
});
