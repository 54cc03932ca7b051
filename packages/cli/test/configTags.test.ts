/**
 * Tags and run triggers from the CLI (issue 29): `trellis configs create --tag --after`,
 * `trellis configs update --tag/--untag/--no-tags`, shown by `configs show` and in `--json`, and
 * found by `configs list --tag`; the real binary against the real server on SQLite and Postgres.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { VineView } from '@trellis/core';
import {
  checkTestPostgres,
  createTestDatabase,
  describeOnEachDialect,
  type TestDatabase,
  testPostgresPoolSize,
} from '@trellis/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { login, runTrellis, TempHome, TestServer } from './harness.js';

const postgres = await checkTestPostgres();

describeOnEachDialect('configuration tags in the CLI', postgres, (dialect) => {
  let database: TestDatabase;
  let server: TestServer;
  let home: TempHome;
  let dir: string;

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    server = await new TestServer().start(0, {
      DATABASE_URL: database.url,
      TRELLIS_DB_POOL_MAX: String(testPostgresPoolSize()),
    });
    home = new TempHome();
    await login(server, home);
    dir = mkdtempSync(join(tmpdir(), 'trellis-tags-'));
    mkdirSync(join(dir, 'infra'));
    writeFileSync(join(dir, 'infra', 'main.tf'), 'terraform {}\n');
  }, 90_000);
  afterAll(async () => {
    await server?.destroy();
    await database?.drop();
    home?.remove();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const run = (...args: string[]) => runTrellis(args, { env: home.env() });
  async function trellis(...args: string[]) {
    const result = await run(...args);
    if (result.code !== 0) throw new Error(`trellis ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
    return result;
  }
  const showJson = async (name: string) =>
    JSON.parse((await trellis('configs', 'show', name, '--json')).stdout) as VineView;

  it('creates a tagged configuration that runs after another, and shows both', async () => {
    await trellis('vineyards', 'create', 'tag-yard');
    const infra = join(dir, 'infra');
    await trellis('configs', 'create', 'network', '--vineyard', 'tag-yard', '--dir', infra);
    const created = await trellis(
      'configs',
      'create',
      'web',
      '--vineyard',
      'tag-yard',
      '--dir',
      infra,
      '--tag',
      'Team:Web',
      '--tag',
      'prod',
      '--after',
      'network',
      '--json',
    );
    const vine = JSON.parse(created.stdout) as VineView;
    const network = await showJson('network');
    expect(vine.tags).toEqual(['prod', 'team:web']);
    expect(vine.triggers.after).toEqual([network.id]);
    const shown = await trellis('configs', 'show', 'web');
    expect(shown.stdout).toMatch(/Tags:\s+prod, team:web\n/);
    expect(shown.stdout).toContain(`Runs after`);
    const listed = await trellis('configs', 'list', '--tag', 'team:web', '--json');
    expect((JSON.parse(listed.stdout) as { name: string }[]).map((item) => item.name)).toEqual(['web']);
  });

  it('adds and removes tags with configs update, keeping the others, and --no-tags removes them all', async () => {
    const updated = await trellis('configs', 'update', 'web', '--tag', 'eu', '--untag', 'PROD');
    expect(updated.stderr).toContain('Updated configuration web (tags)');
    expect(updated.stdout).not.toContain('stale');
    expect((await showJson('web')).tags).toEqual(['eu', 'team:web']);
    const json = JSON.parse((await trellis('configs', 'update', 'web', '--no-tags', '--json')).stdout) as VineView;
    expect(json.tags).toEqual([]);
    expect((await trellis('configs', 'show', 'web')).stdout).toMatch(/Tags:\s+-\n/);
  });

  it('refuses a bad tag naming the flag, and changes nothing', async () => {
    await trellis('configs', 'update', 'web', '--tag', 'keep');
    const refused = await run('configs', 'update', 'web', '--tag', 'not/ok');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('--tag');
    expect(refused.stderr).toContain('"not/ok" is not a tag');
    const create = await run(
      'configs',
      'create',
      'db',
      '--vineyard',
      'tag-yard',
      '--dir',
      join(dir, 'infra'),
      '--tag',
      'a b',
    );
    expect(create.code).not.toBe(0);
    expect(create.stderr).toContain('"a b" is not a tag');
    expect((await run('configs', 'show', 'db')).code).not.toBe(0);
    expect((await showJson('web')).tags).toEqual(['keep']);
    const both = await run('configs', 'update', 'web', '--tag', 'x', '--untag', 'X');
    expect(both.code).not.toBe(0);
    expect(both.stderr).toContain('--tag and --untag both name x');
  });
});
