import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AgentProcess,
  type E2eServer,
  killLeftovers,
  logText,
  startAgent,
  startServer,
  waitForJob,
} from '../support/e2e.js';

/**
 * Issue 10, findings 5 and 10, with the real server and agent binaries. The engine is a script that
 * writes its environment to a file and fails: what matters here happens before and around it.
 */
describe('git sources and state credentials as the agent handles them', { timeout: 180_000 }, () => {
  let server: E2eServer;
  let strict: AgentProcess;
  let files: AgentProcess;
  let scratch: string;
  let repoUrl: string;
  let vineyardId: string;

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'trellis-source-safety-'));
    const engine = join(scratch, 'fake-engine');
    mkdirSync(join(scratch, 'env'));
    // It keeps its environment under the name of the job's `marker` variable, read from the job's
    // variables file (in the workspace, above the source directory it runs in), then fails.
    writeFileSync(
      engine,
      [
        '#!/bin/sh',
        'dir=$PWD; while [ "$dir" != / ] && [ ! -f "$dir/trellis.tfvars.json" ]; do dir=$(dirname "$dir"); done',
        'marker=$(sed -n \'s/.*"marker": "\\(.*\\)".*/\\1/p\' "$dir/trellis.tfvars.json")',
        `env > "${join(scratch, 'env')}/$marker.env"`,
        'exit 1',
        '',
      ].join('\n'),
    );
    chmodSync(engine, 0o755);
    repoUrl = bareRepo(scratch);
    server = await startServer();
    [strict, files] = await Promise.all([
      startAgent(server, { name: 'strict', env: { TRELLIS_ENGINE_BIN: engine } }),
      startAgent(server, { name: 'files', args: ['--allow-file-sources'], env: { TRELLIS_ENGINE_BIN: engine } }),
    ]);
    vineyardId = (await server.user.createVineyard('source-yard')).id;
  });

  afterAll(async () => {
    await Promise.all([strict?.stop(), files?.stop()]);
    killLeftovers();
    await server?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  /** A vine created through the API, then given `source` straight in the store (an older record). */
  async function vineWithStoredSource(name: string, source: Record<string, unknown>) {
    const vine = await server.user.createConfiguration({
      name,
      vineyard_id: vineyardId,
      source: { type: 'git', url: repoUrl, ref: 'v1' },
    });
    const db = new Database(join(server.dataDir, 'trellis.db'));
    try {
      db.pragma('busy_timeout = 10000');
      const changed = db.prepare('UPDATE vines SET source = ? WHERE id = ?').run(JSON.stringify(source), vine.id);
      expect(changed.changes).toBe(1);
    } finally {
      db.close();
    }
    return vine;
  }

  it.each([
    ['a ref', (marker: string) => ({ type: 'git', url: repoUrl, ref: `--upload-pack=touch ${marker}`, path: null })],
    ['a URL', (marker: string) => ({ type: 'git', url: `--upload-pack=touch ${marker}`, ref: 'v1', path: null })],
  ])('runs nothing for %s that is a git option, even from a record older than the API rule', async (what, hostile) => {
    const marker = join(scratch, `pwned-${what.replace(/\W/g, '')}`);
    const vine = await vineWithStoredSource(`hostile-${what.replace(/\W/g, '')}`, hostile(marker));
    expect((await server.user.getConfiguration(vine.id)).source).toMatchObject({ type: 'git' });
    const job = await server.user.createJob({
      job_type: 'PLAN',
      configuration_id: vine.id,
      assigned_worker_id: files.workerId,
    });
    const done = await waitForJob(server, job.id);
    expect(done.status).toBe('FAILED');
    expect(done.error_message).toMatch(
      /^refusing the git source, nothing was run: source\.(ref|url) must not start with '-'/,
    );
    expect(existsSync(marker)).toBe(false);
  });

  it('refuses file:// sources on an agent that does not allow them, and clones them on one that does', async () => {
    const vine = await server.user.createConfiguration({
      name: 'local-repo',
      vineyard_id: vineyardId,
      source: { type: 'git', url: repoUrl, ref: 'v1' },
      variables: { marker: 'from-file-source' },
    });
    const refused = await server.user.createJob({
      job_type: 'PLAN',
      configuration_id: vine.id,
      assigned_worker_id: strict.workerId,
    });
    const failed = await waitForJob(server, refused.id);
    expect(failed.status).toBe('FAILED');
    expect(failed.error_message).toMatch(
      /source\.url is a file:\/\/ address, which this agent refuses .*--allow-file-sources/,
    );
    expect(existsSync(join(scratch, 'env', 'from-file-source.env'))).toBe(false);

    const cloned = await server.user.createJob({
      job_type: 'PLAN',
      configuration_id: vine.id,
      assigned_worker_id: files.workerId,
    });
    expect((await waitForJob(server, cloned.id)).status).toBe('FAILED'); // the fake engine fails
    expect(await logText(server, cloned.id)).toContain('source: git file://');
    expect(existsSync(join(scratch, 'env', 'from-file-source.env'))).toBe(true);
  });

  it('gives the engine the state credentials only for the backend the agent wrote', async () => {
    const run = async (name: string, files: Record<string, string>) => {
      const vine = await server.user.createConfiguration({
        name,
        vineyard_id: vineyardId,
        source: { type: 'inline', files },
        variables: { marker: name },
      });
      const job = await server.user.createJob({
        job_type: 'PLAN',
        configuration_id: vine.id,
        assigned_worker_id: strict.workerId,
      });
      expect((await waitForJob(server, job.id)).status).toBe('FAILED');
      return {
        job,
        log: await logText(server, job.id),
        env: readFileSync(join(scratch, 'env', `${name}.env`), 'utf8'),
      };
    };
    const own = await run('own-http-backend', {
      'main.tf': 'terraform {\n  backend "http" {\n    address = "https://state.elsewhere.example.test/x"\n  }\n}\n',
    });
    expect(own.log).toContain('the configuration declares its own backend');
    expect(own.env).not.toMatch(/^TF_HTTP_/m);
    expect(own.env).not.toContain(strict.workerToken);

    const ours = await run('trellis-backend', { 'main.tf': 'output "x" { value = 1 }\n' });
    expect(ours.log).toContain('state: the Trellis control plane');
    expect(ours.env).toMatch(/^TF_HTTP_USERNAME=/m);
    // The job's own state token, not the worker token.
    expect(ours.env).toMatch(/^TF_HTTP_PASSWORD=trj_/m);
    expect(ours.env).not.toContain(strict.workerToken);
    expect(ours.log).toContain("the job's own state token");
    for (const env of [own.env, ours.env]) expect(env).not.toMatch(/^TRELLIS_/m);
  });
});

/** A bare repository with `main.tf` at its root, tagged v1; its file:// URL. */
function bareRepo(root: string): string {
  const work = join(root, 'work');
  mkdirSync(work);
  writeFileSync(join(work, 'main.tf'), 'output "x" { value = 1 }\n');
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: 't',
    GIT_AUTHOR_EMAIL: 't@e',
    GIT_COMMITTER_NAME: 't',
    GIT_COMMITTER_EMAIL: 't@e',
  };
  const git = (...args: string[]) => execFileSync('git', args, { cwd: work, env, stdio: 'ignore' });
  git('init', '--quiet', '--initial-branch=main');
  git('add', '.');
  git('commit', '--quiet', '-m', 'infra');
  git('tag', 'v1');
  execFileSync('git', ['clone', '--quiet', '--bare', work, join(root, 'infra.git')], { stdio: 'ignore' });
  return `file://${join(root, 'infra.git')}`;
}
