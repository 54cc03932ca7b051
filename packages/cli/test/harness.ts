/**
 * Test harness: runs the built `trellis` binary in a temporary HOME, and the real control plane
 * (`trellis-server`) on a free port with its own data directory.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TrellisClient } from '@trellis/client';
import {
  bootstrapSessionCookie,
  deviceLoginTokens,
  type ProcessResult,
  runProcess,
  type ServerProcess,
  startServerProcess,
} from '@trellis/testkit';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const TRELLIS_BIN = join(ROOT, 'packages/cli/dist/bin/trellis.js');

export type RunResult = ProcessResult;

/** A temporary HOME with its own XDG config dir; `env` is what the CLI runs with. */
export class TempHome {
  readonly dir = mkdtempSync(join(tmpdir(), 'trellis-cli-home-'));
  readonly configHome = join(this.dir, 'config');
  readonly authPath = join(this.configHome, 'trellis', 'auth.json');

  env(extra: Record<string, string> = {}): Record<string, string> {
    return {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: this.dir,
      XDG_CONFIG_HOME: this.configHome,
      ...extra,
    };
  }

  readAuth(): {
    server: string;
    access_token: string;
    refresh_token: string;
    access_token_expires_at: string;
    user_email: string;
  } {
    return JSON.parse(readFileSync(this.authPath, 'utf8'));
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Runs `trellis ARGS` to completion; `input` is written to its stdin, which is then closed. */
export function runTrellis(
  args: string[],
  options: { env: Record<string, string>; input?: string; timeoutMs?: number },
): Promise<RunResult> {
  return runProcess(process.execPath, [TRELLIS_BIN, ...args], {
    env: options.env,
    ...(options.input === undefined ? {} : { input: options.input }),
    timeoutMs: options.timeoutMs ?? 20_000,
  });
}

/** A running `trellis` whose output is watched while the test does other things. */
export class RunningTrellis {
  readonly child: ChildProcess;
  stdout = '';
  stderr = '';
  readonly done: Promise<RunResult>;

  constructor(args: string[], env: Record<string, string>) {
    this.child = spawn(process.execPath, [TRELLIS_BIN, ...args], { env, stdio: 'pipe' });
    this.child.stdout?.on('data', (data) => {
      this.stdout += data;
    });
    this.child.stderr?.on('data', (data) => {
      this.stderr += data;
    });
    this.done = new Promise((resolve, reject) => {
      this.child.on('error', reject);
      this.child.on('close', (code) => resolve({ code, stdout: this.stdout, stderr: this.stderr }));
    });
  }

  write(text: string): void {
    this.child.stdin?.write(text);
  }

  /** Resolves with the first match of `pattern` in stdout+stderr. */
  waitFor(pattern: RegExp, timeoutMs = 15_000): Promise<RegExpMatchArray> {
    return waitUntil(
      () => pattern.exec(this.stderr) ?? pattern.exec(this.stdout),
      timeoutMs,
      () => `no ${pattern} in\nstdout: ${this.stdout}\nstderr: ${this.stderr}`,
    );
  }
}

/** Polls `probe` until it returns something truthy. */
export async function waitUntil<T>(
  probe: () => T | null | undefined | false,
  timeoutMs: number,
  describe: () => string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out: ${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

export const JWT_SECRET = 'cli-tests-jwt-secret-0123456789abcdef0123456789';
export const WEB_URL = 'http://web.trellis.test';
export const BOOTSTRAP_TOKEN = 'cli-tests-bootstrap-token-0123456789';

/** The real control plane in a temporary data directory. */
export class TestServer {
  url = '';
  private process: ServerProcess | null = null;
  private readonly dataDir = mkdtempSync(join(tmpdir(), 'trellis-cli-server-'));
  private cookie: string | null = null;

  /** `env` adds to (or overrides) the server's environment, e.g. `TRELLIS_BOOTSTRAP_EMAIL`. */
  async start(port = 0, env: Record<string, string> = {}): Promise<this> {
    this.process = await startServerProcess(
      {
        HOME: this.dataDir,
        PORT: String(port),
        HOST: '127.0.0.1',
        TRELLIS_DATA_DIR: this.dataDir,
        TRELLIS_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
        TRELLIS_WEB_URL: WEB_URL,
        CLI_JWT_SECRET: JWT_SECRET,
        ...env,
      },
      { inheritEnv: false },
    );
    this.url = this.process.url.replace(/\/+$/, '');
    return this;
  }

  /** The web session of the bootstrap admin, which answers logins in place of a browser. */
  async sessionCookie(): Promise<string> {
    if (this.cookie) return this.cookie;
    this.cookie = await bootstrapSessionCookie(this.url, BOOTSTRAP_TOKEN);
    return this.cookie;
  }

  /** What the browser does on `/cli/login`: approve the device code, get the code to type. */
  async approve(deviceCode: string): Promise<string> {
    const client = new TrellisClient({
      baseUrl: this.url,
      auth: { kind: 'cookie', cookie: await this.sessionCookie(), origin: WEB_URL },
    });
    return (await client.generateCliLogin(deviceCode)).verification_code;
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const process = this.process;
    this.process = null;
    await process?.stop(signal);
  }

  async destroy(): Promise<void> {
    await this.stop();
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/** Logs `home` in to `server` through the real binary, answering the code on stdin. */
/**
 * Starts `server` with a second person: `email` signs in first (the bootstrap sign-in, with that
 * email) and logs a CLI in; then the server comes back on the same port and database with the
 * usual administrator, logged in at `ownerHome`. Returns the second person's CLI access token.
 */
export async function startWithSecondPerson(server: TestServer, ownerHome: TempHome, email: string): Promise<string> {
  await server.start(0, { TRELLIS_BOOTSTRAP_EMAIL: email });
  const cookie = await bootstrapSessionCookie(server.url, BOOTSTRAP_TOKEN);
  const token = (await deviceLoginTokens(server.url, cookie, WEB_URL)).access_token;
  const port = Number(new URL(server.url).port);
  await server.stop();
  await server.start(port);
  await login(server, ownerHome);
  return token;
}

export async function login(server: TestServer, home: TempHome): Promise<RunResult> {
  const run = new RunningTrellis(['login', '--server', server.url, '--no-browser'], home.env());
  const [, deviceCode] = await run.waitFor(/device_code=([0-9a-f-]{36})/);
  run.write(`${await server.approve(deviceCode as string)}\n`);
  const result = await run.done;
  if (result.code !== 0) throw new Error(`login failed (${result.code}): ${result.stderr}`);
  return result;
}

/** A client with the access token saved in `home` (the test acting as another program). */
export function userClient(server: TestServer, home: TempHome): TrellisClient {
  const token = home.readAuth().access_token;
  return new TrellisClient({ baseUrl: server.url, auth: { kind: 'bearer', accessToken: () => token } });
}

/** Registers an agent for the user and returns a client that speaks for it. */
export async function fakeAgent(server: TestServer, home: TempHome, name = 'test-agent'): Promise<TrellisClient> {
  const { worker_id, worker_token } = await userClient(server, home).registerAgent({ name });
  return new TrellisClient({
    baseUrl: server.url,
    auth: { kind: 'worker', workerId: worker_id, workerToken: worker_token },
  });
}

/** An HS256 JWT signed with the test server's secret (to make an already-expired access token). */
export function signJwt(claims: Record<string, unknown>, secret = JWT_SECRET): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const body = `${encode({ alg: 'HS256', typ: 'JWT' })}.${encode(claims)}`;
  return `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
}
