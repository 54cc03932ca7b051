import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { AesGcmSecretBox, identityTokenContext } from '@trellis/core';
import { type GitServer, startGitServer } from '@trellis/testkit';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AgentProcess,
  type E2eServer,
  jobLog,
  killLeftovers,
  startAgent,
  startServer,
  TOFU,
  waitForJob,
} from '../support/e2e.js';

/**
 * Issue 13, private clones: a vine connected to a repository that needs credentials, served by a
 * real git server on loopback; the real server and agent binaries and real OpenTofu. The job's
 * snapshot pins an older commit than the branch's head: OpenTofu must plan that commit's files.
 */
describe.skipIf(TOFU === null)('a PLAN of a connected vine on a private repository', { timeout: 180_000 }, () => {
  const TOKEN = `gho_${randomBytes(18).toString('hex')}`;
  const KEY = randomBytes(32);
  let git: GitServer;
  let server: E2eServer;
  let agent: AgentProcess;
  let shas: string[];

  beforeAll(async () => {
    git = await startGitServer({ username: 'x-access-token', password: TOKEN });
    shas = git.createRepo('infra', [
      { 'stack/main.tf': 'output "commit" {\n  value = "first-commit"\n}\n' },
      { 'stack/main.tf': 'output "commit" {\n  value = "second-commit"\n}\n' },
    ]);
    git.commit('infra', { 'stack/main.tf': 'output "commit" {\n  value = "third-commit"\n}\n' });
    server = await startServer({
      TRELLIS_ENCRYPTION_KEY: KEY.toString('hex'),
      TRELLIS_GITHUB_CLIENT_ID: 'github-client',
      TRELLIS_GITHUB_CLIENT_SECRET: 'github-secret',
    });
    agent = await startAgent(server, { name: 'cloner', env: { GIT_SSL_CAINFO: git.caFile } });
  });

  afterAll(async () => {
    await agent?.stop();
    killLeftovers();
    await server?.stop();
    await git?.stop();
  });

  it('clones the pinned commit with the connecting user’s token, which appears in no log', async () => {
    const vineyard = await server.user.createVineyard('private-yard');
    const vine = await server.user.createConfiguration({
      name: 'private-infra',
      vineyard_id: vineyard.id,
      source: { type: 'git', url: git.url('infra'), ref: 'main', path: 'stack' },
      engine: 'tofu',
    });
    // The connection, the connecting user's GitHub identity with its (sealed) token, and the
    // commit a push would pin, written into the server's database as the connect use case and a
    // webhook would.
    const box = new AesGcmSecretBox([new Uint8Array(KEY)]);
    const sealed = await box.seal(TOKEN, identityTokenContext('github', '4242'));
    const db = new Database(join(server.dataDir, 'trellis.db'));
    try {
      db.pragma('busy_timeout = 10000');
      const { id: userId } = db.prepare('SELECT id FROM users LIMIT 1').get() as { id: string };
      const { owner_id: ownerId } = db.prepare('SELECT owner_id FROM vines WHERE id = ?').get(vine.id) as {
        owner_id: string;
      };
      db.prepare(
        "INSERT INTO identities (user_id, provider, provider_user_id, provider_token, scopes) VALUES (?, 'github', '4242', ?, 'repo')",
      ).run(userId, sealed);
      const at = new Date().toISOString();
      db.prepare(
        `INSERT INTO vcs_connections (vine_id, owner_id, provider, repository, repository_key, branch, paths,
           auto_deploy, pull_requests, webhook_mode, hook_id, webhook_secret_sealed, connected_by, created_at, updated_at)
         VALUES (?, ?, 'github', 'ada/infra', 'ada/infra', 'main', '[]', 0, 1, 'manual', NULL, 'sealed', ?, ?, ?)`,
      ).run(vine.id, ownerId, userId, at, at);
      const source = { type: 'git', url: git.url('infra'), ref: 'main', path: 'stack', commit: shas[0] };
      expect(db.prepare('UPDATE vines SET source = ? WHERE id = ?').run(JSON.stringify(source), vine.id).changes).toBe(
        1,
      );
    } finally {
      db.close();
    }

    const before = git.stats.authorized;
    const queued = await server.user.createJob({ job_type: 'PLAN', configuration_id: vine.id });
    const job = await waitForJob(server, queued.id);
    const chunks = await jobLog(server, job.id);
    const text = chunks.map((chunk) => chunk.log_chunk).join('');
    expect(job.status, text).toBe('SUCCESS');
    // The snapshot pins the commit; OpenTofu planned that commit's files, not the branch head's.
    expect(job.config_snapshot.source).toMatchObject({ commit: shas[0] });
    expect(text).toContain(`commit ${shas[0]}`);
    expect(text).toContain('first-commit');
    expect(text).not.toContain('second-commit');
    expect(text).not.toContain('third-commit');
    expect(text).toContain('with the connection’s credentials');
    // The clone went through the server's Basic auth, with the token.
    expect(git.stats.authorized).toBeGreaterThan(before);
    // The token is in no log line of the job, nor the agent's own log, nor the job record.
    for (const chunk of chunks) expect(chunk.log_chunk).not.toContain(TOKEN);
    expect(agent.output()).not.toContain(TOKEN);
    expect(JSON.stringify(await server.user.getJob(job.id))).not.toContain(TOKEN);
    expect(server.output()).not.toContain(TOKEN);
  });
});
