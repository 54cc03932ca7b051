import type { TrellisClient } from '@trellis/client';
import type { TestDatabase } from '@trellis/testkit';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningControlPlane, startControlPlane } from './support/controlPlane.js';
import { describeEachDialect } from './support/dialects.js';

/** The raw answer of `POST /api/cli/configurations`, to see the problem document as sent. */
async function postConfiguration(server: RunningControlPlane, body: unknown) {
  const response = await fetch(`${server.url}/api/cli/configurations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${await server.accessToken()}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, text, problem: JSON.parse(text) as Record<string, unknown> };
}

/** Writes a vine's `source` past the API, as a record from before the git source rule would hold it. */
async function storeSource(database: TestDatabase, vineId: string, source: unknown): Promise<void> {
  if (database.dialect === 'sqlite') {
    const db = new Database(database.url.slice('sqlite://'.length));
    try {
      db.prepare('UPDATE vines SET source = ? WHERE id = ?').run(JSON.stringify(source), vineId);
    } finally {
      db.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query('UPDATE vines SET source = $1::jsonb WHERE id = $2', [JSON.stringify(source), vineId]);
  } finally {
    await client.end();
  }
}

describeEachDialect('git sources over HTTP (issue 10, finding 5)', (dialect) => {
  let server: RunningControlPlane;
  let user: TrellisClient;
  let vineyardId: string;

  beforeAll(async () => {
    server = await startControlPlane(dialect);
    user = await server.userClient();
    vineyardId = (await user.createVineyard('git-yard')).id;
  });
  afterAll(async () => {
    await server?.close();
  });

  it.each([
    [{ url: 'https://git.example.test/infra.git', ref: '--upload-pack=touch /tmp/x' }, 'source.ref'],
    [{ url: '--upload-pack=touch /tmp/x' }, 'source.url'],
    [{ url: 'https://git.example.test/infra.git', path: '--output=x' }, 'source.path'],
    [{ url: 'https://git.example.test/infra.git', ref: 'main\n--upload-pack=x' }, 'source.ref'],
    [{ url: 'ext::sh' }, 'source.url'],
    [{ url: 'http://git.example.test/infra.git' }, 'source.url'],
  ])('refuses the git source %j with 400 validation_failed naming %s', async (source, field) => {
    const answer = await postConfiguration(server, {
      name: 'hostile',
      vineyard_id: vineyardId,
      source: { type: 'git', ...source },
    });
    expect(answer.status).toBe(400);
    expect(answer.problem.code).toBe('validation_failed');
    expect((answer.problem.errors as { path: string }[]).map((issue) => issue.path)).toEqual([field]);
    expect((await user.listConfigurations()).map((vine) => vine.name)).not.toContain('hostile');
  });

  it('refuses credentials in the URL, says how to give them, and never shows them', async () => {
    const answer = await postConfiguration(server, {
      name: 'with-token',
      vineyard_id: vineyardId,
      source: { type: 'git', url: 'https://deploy:ghp_s3cretT0ken@git.example.test/infra.git' },
    });
    expect(answer.status).toBe(400);
    expect(answer.problem.code).toBe('validation_failed');
    const [issue] = answer.problem.errors as { path: string; message: string }[];
    expect(issue?.path).toBe('source.url');
    expect(issue?.message).toMatch(/credential helper/);
    expect(issue?.message).toMatch(/SSH key/);
    expect(answer.text).not.toContain('ghp_s3cretT0ken');
  });

  it('accepts https, ssh and scp-like addresses, and file:// (each agent decides on those)', async () => {
    for (const [name, url] of [
      ['https-src', 'https://git.example.test/infra.git'],
      ['ssh-src', 'ssh://git@git.example.test/org/infra.git'],
      ['scp-src', 'git@git.example.test:org/infra.git'],
      ['file-src', 'file:///srv/git/infra.git'],
    ] as const) {
      const vine = await user.createConfiguration({
        name,
        vineyard_id: vineyardId,
        source: { type: 'git', url, ref: 'v1', path: 'stacks/web' },
      });
      expect(vine.source).toEqual({ type: 'git', url, ref: 'v1', path: 'stacks/web' });
    }
  });

  it('never shows credentials of a record written before they were refused', async () => {
    const vine = await user.createConfiguration({
      name: 'old-record',
      vineyard_id: vineyardId,
      source: { type: 'git', url: 'https://git.example.test/infra.git', ref: 'main' },
    });
    await storeSource(server.database, vine.id, {
      type: 'git',
      url: 'https://deploy:ghp_0ldS3cret@git.example.test/infra.git',
      ref: 'main',
      path: null,
    });
    const job = await user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
    const answers = await Promise.all(
      [`/api/cli/configurations/${vine.id}`, '/api/cli/configurations', `/api/cli/jobs/${job.id}`].map(async (path) => {
        const response = await fetch(`${server.url}${path}`, {
          headers: { authorization: `Bearer ${await server.accessToken()}` },
        });
        expect(response.status).toBe(200);
        return response.text();
      }),
    );
    for (const text of answers) {
      expect(text).not.toContain('ghp_0ldS3cret');
      expect(text).toContain('https://***@git.example.test/infra.git');
    }
  });
});
