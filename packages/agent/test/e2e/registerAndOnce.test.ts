import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_BIN, type E2eServer, killLeftovers, logText, startServer, TOFU, vineOf } from '../support/e2e.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function agent(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [AGENT_BIN, ...args], {
      env: { ...process.env, TRELLIS_ENGINE_BIN: TOFU ?? 'tofu', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (data) => {
      stdout += data;
    });
    child.stderr.on('data', (data) => {
      stderr += data;
    });
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe.skipIf(!TOFU)('trellis-agent register and run --once', { timeout: 180_000 }, () => {
  let server: E2eServer;
  const home = mkdtempSync(join(tmpdir(), 'trellis-agent-home-'));
  const configHome = join(home, 'config');
  const credentials = join(configHome, 'trellis', 'agent.json');
  const env = () => ({ XDG_CONFIG_HOME: configHome, HOME: home, TRELLIS_URL: '', TRELLIS_TOKEN: '' });

  beforeAll(async () => {
    server = await startServer();
  });

  afterAll(async () => {
    killLeftovers();
    await server?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('registers with the CLI’s login, refreshing it first, and keeps the credentials owner-only', async () => {
    mkdirSync(join(configHome, 'trellis'), { recursive: true });
    const authFile = join(configHome, 'trellis', 'auth.json');
    writeFileSync(
      authFile,
      JSON.stringify({
        server: server.url,
        user_email: 'admin@localhost',
        access_token: 'expired-access-token',
        access_token_expires_at: new Date(Date.now() - 60_000).toISOString(),
        refresh_token: server.user.refreshToken,
      }),
      { mode: 0o600 },
    );
    const run = await agent(['register', '--name', 'laptop-runner'], env());
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Registered agent "laptop-runner"');
    expect(statSync(credentials).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(readFileSync(credentials, 'utf8'));
    expect(stored).toMatchObject({ server: server.url, name: 'laptop-runner' });
    expect(run.stdout).not.toContain(stored.worker_token);
    // The CLI's login was rotated in place, so `trellis` keeps working.
    const login = JSON.parse(readFileSync(authFile, 'utf8'));
    expect(login.refresh_token).not.toBe(server.user.refreshToken);
    expect(Date.parse(login.access_token_expires_at)).toBeGreaterThan(Date.now());
    const workers = await server.user.listWorkers();
    expect(workers.find((worker) => worker.id === stored.worker_id)?.name).toBe('laptop-runner');

    const again = await agent(['register', '--name', 'twice'], env());
    expect(again.code).toBe(3);
    expect(again.stderr).toContain('pass --force to replace them');
  });

  it('runs one job with --once from the stored credentials: exit 0 on success, 1 on failure, 0 with no work', async () => {
    const good = await vineOf(server, 'once-good', 'outputs', { cluster: 'once' });
    const job = await server.user.createJob({ job_type: 'DEPLOY', configuration_id: good.id });
    const first = await agent(['run', '--once', '--claim-wait', '5'], env());
    expect(first.code).toBe(0);
    expect((await server.user.getJob(job.id)).status).toBe('SUCCESS');
    for (const line of first.stderr.trim().split('\n')) expect(() => JSON.parse(line)).not.toThrow();
    expect(first.stderr).toContain('"msg":"job ended"');

    const broken = await vineOf(server, 'once-broken', 'broken');
    const failing = await server.user.createJob({ job_type: 'PLAN', configuration_id: broken.id });
    const second = await agent(['run', '--once', '--claim-wait', '5'], env());
    expect(second.code).toBe(1);
    expect((await server.user.getJob(failing.id)).status).toBe('FAILED');
    expect(await logText(server, failing.id)).toContain('Error: Reference to undeclared resource');

    const idle = await agent(['run', '--once', '--claim-wait', '1'], env());
    expect(idle.code).toBe(0);
    expect(idle.stderr).not.toContain('job started');
  });

  it('refuses to start without credentials, and with a credentials file others can read', async () => {
    const missing = await agent(['run', '--credentials-file', join(home, 'none.json')], env());
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain('trellis-agent register --name');
    const loose = join(home, 'loose.json');
    writeFileSync(loose, readFileSync(credentials), { mode: 0o644 });
    const refused = await agent(['run', '--credentials-file', loose], env());
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('is readable by other users');
  });

  it('exits 3 when the control plane refuses the worker token', async () => {
    const stored = JSON.parse(readFileSync(credentials, 'utf8'));
    const run = await agent(['run', '--claim-wait', '1'], {
      ...env(),
      TRELLIS_URL: server.url,
      TRELLIS_WORKER_ID: stored.worker_id,
      TRELLIS_WORKER_TOKEN: 'not-the-token',
    });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('refused this worker');
  });
});
