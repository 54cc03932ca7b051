/**
 * Interactive use in a pseudo-terminal (util-linux `script`, from Debian's essential bsdutils):
 * the login prompt, colour at a terminal, Ctrl-C while following offering to cancel the job, and
 * the destroy confirmation and those that delete a configuration and an organization.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import type { TrellisClient } from '@trellis/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fakeAgent, login, TempHome, TestServer, TRELLIS_BIN, userClient, waitUntil } from './harness.js';

// biome-ignore lint/suspicious/noControlCharactersInRegex: terminal escape sequences
const SGR = /\u001b\[[0-9;]*m/;

/** `trellis ARGS` attached to a pseudo-terminal; keys typed go through the terminal's line discipline. */
class Pty {
  private readonly child: ChildProcess;
  output = '';
  readonly done: Promise<number | null>;

  constructor(args: string[], env: Record<string, string>) {
    const words = [process.execPath, TRELLIS_BIN, ...args].map((word) => `'${word.replaceAll("'", "'\\''")}'`);
    // `exec`: the shell that script starts must not stay between (Ctrl-C would kill it instead).
    this.child = spawn('script', ['-qfec', `exec ${words.join(' ')}`, '/dev/null'], {
      env: { ...env, SHELL: '/bin/sh', TERM: 'xterm-256color' },
      stdio: 'pipe',
    });
    this.child.stdout?.on('data', (data) => {
      this.output += data;
    });
    this.child.stderr?.on('data', (data) => {
      this.output += data;
    });
    this.done = new Promise((resolve, reject) => {
      this.child.on('error', reject);
      this.child.on('close', (code) => resolve(code));
    });
  }

  /** What is on screen, without colour codes. */
  get text(): string {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: terminal escape sequences
    return this.output.replace(/\u001b\[[0-9;]*[A-Za-z]/g, '');
  }

  type(keys: string): void {
    this.child.stdin?.write(keys);
  }

  waitFor(pattern: RegExp, timeoutMs = 15_000): Promise<RegExpMatchArray> {
    return waitUntil(
      () => pattern.exec(this.text),
      timeoutMs,
      () => `no ${pattern} on screen:\n${this.text}`,
    );
  }

  kill(): void {
    this.child.kill('SIGKILL');
  }
}

let server: TestServer;
let home: TempHome;
let agent: TrellisClient;
const ptys: Pty[] = [];

function pty(args: string[], extra: Record<string, string> = {}): Pty {
  const terminal = new Pty(args, home.env(extra));
  ptys.push(terminal);
  return terminal;
}

beforeAll(async () => {
  server = await new TestServer().start();
  home = new TempHome();
  await login(server, home);
  agent = await fakeAgent(server, home);
  const user = userClient(server, home);
  const vineyard = await user.createVineyard('pty');
  await user.createConfiguration({
    name: 'web',
    vineyard_id: vineyard.id,
    source: { type: 'inline', files: { 'main.tf': '' } },
  });
});
afterEach(async () => {
  for (const terminal of ptys.splice(0)) terminal.kill();
  const user = userClient(server, home);
  for (const job of await user.listJobs()) {
    if (job.status === 'QUEUED' || job.status === 'PROCESSING') await user.cancelJob(job.id);
  }
});
afterAll(async () => {
  await server?.destroy();
  home?.remove();
});

describe('at a terminal', () => {
  it('login prompts for the code, in colour, and logs in', async () => {
    const other = new TempHome();
    try {
      const terminal = new Pty(['login', '--server', server.url], other.env());
      ptys.push(terminal);
      const [, deviceCode] = await terminal.waitFor(/device_code=([0-9a-f-]{36})/);
      await terminal.waitFor(/Verification code: $/);
      expect(terminal.output).toMatch(SGR);
      terminal.type(`${await server.approve(deviceCode as string)}\r`);
      await terminal.waitFor(/Logged in to \S+ as admin@localhost/);
      expect(await terminal.done).toBe(0);
      expect(other.readAuth().user_email).toBe('admin@localhost');
    } finally {
      other.remove();
    }
  });

  it('has no colour with NO_COLOR', async () => {
    const terminal = pty(['jobs', 'show', 'not-a-uuid'], { NO_COLOR: '1' });
    expect(await terminal.done).toBe(2);
    expect(terminal.text).toContain('a job id is a UUID');
    expect(terminal.output).not.toMatch(SGR);
  });

  it('Ctrl-C while following asks to cancel; yes cancels the job and exits 5', async () => {
    const terminal = pty(['plan', 'web']);
    const [, id] = await terminal.waitFor(/Queued PLAN job ([0-9a-f-]{36})/);
    await terminal.waitFor(/waiting for an agent/);
    terminal.type('\u0003');
    await terminal.waitFor(/Cancel plan job [0-9a-f-]{36}\? \[y\/N\] $/);
    terminal.type('y\r');
    await terminal.waitFor(/Plan was CANCELLED/);
    expect(await terminal.done).toBe(5);
    expect((await userClient(server, home).getJob(id as string)).status).toBe('CANCELLED');
  });

  it('Ctrl-C then "no" keeps following to the end', async () => {
    const terminal = pty(['plan', 'web']);
    await terminal.waitFor(/waiting for an agent/);
    const claimed = await agent.claimJob({ wait: 10 });
    const id = claimed?.job.id as string;
    await agent.appendLog(id, 'first line\n', 'STDOUT');
    await terminal.waitFor(/first line/);
    terminal.type('\u0003');
    await terminal.waitFor(/Cancel plan job [0-9a-f-]{36}\? \[y\/N\] $/);
    terminal.type('n\r');
    await terminal.waitFor(/Still following/);
    await agent.appendLog(id, 'second line\n', 'STDERR');
    await agent.reportStatus(id, { status: 'SUCCESS' });
    await terminal.waitFor(/Plan succeeded/);
    expect(await terminal.done).toBe(0);
    expect(terminal.text).toContain('second line');
    // At a terminal stderr lines are red, not prefixed.
    expect(terminal.output).toContain('\u001b[31msecond line\u001b[39m');
    expect((await userClient(server, home).getJob(id)).status).toBe('SUCCESS');
  });

  it('Ctrl-C twice stops following (exit 130) without cancelling', async () => {
    const terminal = pty(['plan', 'web']);
    const [, id] = await terminal.waitFor(/Queued PLAN job ([0-9a-f-]{36})/);
    await terminal.waitFor(/waiting for an agent/);
    terminal.type('\u0003');
    await terminal.waitFor(/\[y\/N\] $/);
    terminal.type('\u0003');
    await terminal.waitFor(/stopped following; job [0-9a-f-]{36} goes on/);
    expect(await terminal.done).toBe(130);
    expect((await userClient(server, home).getJob(id as string)).status).toBe('QUEUED');
  });

  it('destroy asks for the configuration name and queues nothing on a wrong answer', async () => {
    const wrong = pty(['destroy', 'web']);
    await wrong.waitFor(/Type its name to confirm: $/);
    wrong.type('webb\r');
    await wrong.waitFor(/Nothing was queued/);
    expect(await wrong.done).toBe(1);
    expect(await userClient(server, home).listJobs({ status: 'QUEUED' })).toEqual([]);

    const right = pty(['destroy', 'web', '--detach']);
    await right.waitFor(/Type its name to confirm: $/);
    right.type('web\r');
    const [, id] = await right.waitFor(/^([0-9a-f-]{36})\r?$/m);
    expect(await right.done).toBe(0);
    expect((await userClient(server, home).getJob(id as string)).job_type).toBe('DESTROY');
  });
  it('configs delete asks for the configuration name and deletes nothing on a wrong answer', async () => {
    const user = userClient(server, home);
    const vineyard = await user.createVineyard('pty-doomed');
    await user.createConfiguration({
      name: 'doomed-web',
      vineyard_id: vineyard.id,
      source: { type: 'inline', files: { 'main.tf': '' } },
    });
    const wrong = pty(['configs', 'delete', 'doomed-web']);
    await wrong.waitFor(/This deletes configuration doomed-web\. Type its name to confirm: $/);
    wrong.type('doomed\r');
    await wrong.waitFor(/Nothing was deleted/);
    expect(await wrong.done).toBe(1);
    expect((await user.getConfiguration('doomed-web')).name).toBe('doomed-web');

    const right = pty(['configs', 'delete', 'doomed-web']);
    await right.waitFor(/Type its name to confirm: $/);
    right.type('doomed-web\r');
    await right.waitFor(/Deleted configuration doomed-web/);
    expect(await right.done).toBe(0);
    await expect(user.getConfiguration('doomed-web')).rejects.toMatchObject({ status: 404 });
  });

  it('orgs delete asks for the organization name and deletes nothing on a wrong answer', async () => {
    const user = userClient(server, home);
    const org = await user.createOrg('doomed');
    const wrong = pty(['orgs', 'delete', 'doomed']);
    await wrong.waitFor(/Type its name to confirm: $/);
    wrong.type('doomed-not\r');
    await wrong.waitFor(/Nothing was deleted/);
    expect(await wrong.done).toBe(1);
    expect((await user.getOrg(org.id)).name).toBe('doomed');

    const right = pty(['orgs', 'delete', 'doomed']);
    await right.waitFor(/Type its name to confirm: $/);
    right.type('doomed\r');
    await right.waitFor(/Deleted organization doomed/);
    expect(await right.done).toBe(0);
    expect((await user.listOrgs()).map((entry) => entry.name)).not.toContain('doomed');
  });
});
