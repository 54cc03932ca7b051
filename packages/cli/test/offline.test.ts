/**
 * The binary without a control plane: help, usage errors, not logged in, server unreachable,
 * colour rules. Each runs the real `trellis` in a temporary HOME.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort, runTrellis, TempHome } from './harness.js';

const ESC = '\u001b[';
let home: TempHome;

/** Every command the issue asks for. */
const COMMAND_PATHS = [
  'login',
  'logout',
  'whoami',
  'vineyards list',
  'vineyards create',
  'vineyards show',
  'configs list',
  'configs show',
  'configs create',
  'plan',
  'deploy',
  'destroy',
  'jobs list',
  'jobs show',
  'jobs logs',
  'jobs cancel',
  'jobs wait',
  'workers list',
  'workers show',
  'workers register',
  'repos',
];

beforeAll(() => {
  home = new TempHome();
});
afterAll(() => home.remove());

function savedLogin(server: string, into: TempHome = home) {
  mkdirSync(dirname(into.authPath), { recursive: true });
  writeFileSync(
    into.authPath,
    JSON.stringify({
      server,
      user_email: 'a@example.com',
      access_token: 'x.e30.y',
      access_token_expires_at: new Date(Date.now() + 3_600_000).toISOString(),
      refresh_token: 'r',
    }),
    { mode: 0o600 },
  );
}

describe.concurrent('help', () => {
  it('lists every command with the exit codes and environment', async () => {
    const result = await runTrellis(['--help'], { env: home.env() });
    expect(result.code).toBe(0);
    for (const path of COMMAND_PATHS) expect(result.stdout).toContain(`trellis ${path} `);
    expect(result.stdout).toMatch(/Exit codes:[\s\S]*3 not logged in[\s\S]*4 the control plane could not be reached/);
    expect(result.stdout).toContain('TRELLIS_SERVER');
    const bare = await runTrellis([], { env: home.env() });
    expect(bare.code).toBe(0);
    expect(bare.stdout).toBe(result.stdout);
  });

  it.each(COMMAND_PATHS)('`trellis %s --help` has a description and examples', async (path) => {
    const result = await runTrellis([...path.split(' '), '--help'], { env: home.env() });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Examples');
    expect(result.stdout).toContain(`$ trellis ${path}`);
    expect(result.stdout).toContain('--json');
    expect(result.stdout).not.toContain('#0');
  });

  it('prints the version', async () => {
    const result = await runTrellis(['--version'], { env: home.env() });
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe.concurrent('usage errors exit 2 with the usage on stderr', () => {
  it.each([
    [['vineyards', 'list', '--bogus'], /Unsupported option name \("--bogus"\)/],
    [['vineyards', 'create'], /Not enough positional arguments/],
    [['vineyards', 'create', 'a', 'b'], /Extraneous positional argument/],
    [['frobnicate'], /Command not found/],
    [
      ['jobs', 'list', '--status', 'DONE'],
      /Usage Error: --status must be one of QUEUED, PROCESSING, SUCCESS, FAILED, CANCELLED \(got "DONE"\)/,
    ],
    [['jobs', 'list', '--limit', '0'], /Usage Error: --limit must be from 1 to 200 \(got 0\)/],
    [['jobs', 'list', '--limit', 'many'], /Usage Error: --limit must be a number \(got "many"\)/],
    [['jobs', 'show', 'not-a-uuid'], /a job id is a UUID, got "not-a-uuid"/],
    [['deploy', 'web', '--plan', 'yesterday'], /--plan must be a job id/],
    [['configs', 'create', 'web', '--vineyard', 'v'], /give the source: --git URL or --dir DIRECTORY/],
    [['configs', 'create', 'web', '--vineyard', 'v', '--dir', '/nonexistent-dir'], /no such directory/],
    [
      ['configs', 'create', 'web', '--vineyard', 'v', '--git', 'g', '--engine', 'pulumi'],
      /--engine must be one of tofu, terraform \(got "pulumi"\)/,
    ],
    [['configs', 'show'], /give a configuration name or id, or --project NAME/],
    [['repos', 'sourceforge'], /the argument must be one of github, gitlab, bitbucket \(got "sourceforge"\)/],
    [['whoami', '--server', 'ftp://example.com'], /--server must be an http\(s\) URL/],
  ])('trellis %j', async (args, message) => {
    const result = await runTrellis(args, { env: home.env() });
    expect(result.stderr).toMatch(message);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(result.stderr).not.toMatch(/Invalid value for|\[\d+; \d+\] range|#0/);
  });

  it('destroy refuses to run unconfirmed without a terminal, before asking the server', async () => {
    const own = new TempHome();
    savedLogin(`http://127.0.0.1:${await closedPort()}`, own);
    const result = await runTrellis(['destroy', 'web'], { env: own.env() });
    own.remove();
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/pass --yes when not at a terminal/);
  });
});

describe('without a login', () => {
  it('says to run trellis login and exits 3', async () => {
    const fresh = new TempHome();
    try {
      const result = await runTrellis(['vineyards', 'list'], { env: fresh.env() });
      expect(result.code).toBe(3);
      expect(result.stderr).toBe('Error: not logged in; run `trellis login`\n');
      expect(result.stdout).toBe('');
      const debug = await runTrellis(['vineyards', 'list'], { env: fresh.env({ TRELLIS_DEBUG: '1' }) });
      expect(debug.code).toBe(3);
      expect(debug.stderr).toMatch(/^Error: not logged in; run `trellis login`\nNotLoggedInError: .*\n\s+at /);
    } finally {
      fresh.remove();
    }
  });

  it('refuses a login that belongs to another server', async () => {
    const fresh = new TempHome();
    try {
      mkdirSync(dirname(fresh.authPath), { recursive: true });
      writeFileSync(
        fresh.authPath,
        JSON.stringify({
          server: 'http://127.0.0.1:1',
          user_email: 'a@example.com',
          access_token: 'x.e30.y',
          access_token_expires_at: new Date(Date.now() + 3_600_000).toISOString(),
          refresh_token: 'r',
        }),
      );
      const result = await runTrellis(['whoami'], { env: fresh.env({ TRELLIS_SERVER: 'http://127.0.0.1:2' }) });
      expect(result.code).toBe(3);
      expect(result.stderr).toContain('logged in to http://127.0.0.1:1, not http://127.0.0.1:2');
    } finally {
      fresh.remove();
    }
  });
});

describe('server unreachable', () => {
  it('a command says so in one line and exits 4', async () => {
    const server = `http://127.0.0.1:${await closedPort()}`;
    savedLogin(server);
    const result = await runTrellis(['vineyards', 'list'], { env: home.env() });
    expect(result.code).toBe(4);
    expect(result.stderr).toBe(`Error: cannot reach the Trellis control plane at ${server}: ECONNREFUSED\n`);
    expect(result.stdout).toBe('');
  });

  it('login says so before sending anyone to the browser', async () => {
    const server = `http://127.0.0.1:${await closedPort()}`;
    const result = await runTrellis(['login', '--server', server, '--no-browser'], {
      env: home.env(),
      input: 'BCDFGH\n',
    });
    expect(result.code).toBe(4);
    expect(result.stderr).toBe(`Error: cannot reach the Trellis control plane at ${server}: ECONNREFUSED\n`);
  });
});

describe('colour', () => {
  it('is off on a pipe, on with FORCE_COLOR, and off again with NO_COLOR', async () => {
    const fresh = new TempHome();
    const plain = await runTrellis(['vineyards', 'list'], { env: fresh.env() });
    expect(plain.stderr).not.toContain(ESC);
    const forced = await runTrellis(['vineyards', 'list'], { env: fresh.env({ FORCE_COLOR: '1' }) });
    expect(forced.stderr).toContain(`${ESC}31m`);
    const none = await runTrellis(['vineyards', 'list'], { env: fresh.env({ FORCE_COLOR: '1', NO_COLOR: '1' }) });
    fresh.remove();
    expect(none.stderr).not.toContain(ESC);
    expect(none.stderr).toBe(plain.stderr);
  });
});

/**
 * The two login failures the real server cannot be made to produce on demand (a code that
 * expired after 10 minutes, a login already used), from a stand-in that answers as it does.
 */
describe('login failures a stand-in server produces', () => {
  let stub: Server;
  let url: string;
  beforeAll(async () => {
    stub = createServer((req, res) => {
      let body = '';
      req.on('data', (data) => {
        body += data;
      });
      req.on('end', () => {
        if (req.url === '/healthz') {
          res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"status":"ok"}');
          return;
        }
        const code = (JSON.parse(body || '{}') as { verification_code?: string }).verification_code;
        const problem =
          code === 'EXPIRD'
            ? { code: 'expired_token', detail: 'the verification code has expired; run the login again' }
            : { code: 'invalid_grant', detail: 'this login was already used; run the login again' };
        res
          .writeHead(400, { 'Content-Type': 'application/problem+json' })
          .end(JSON.stringify({ type: 'about:blank', title: 'Bad Request', status: 400, ...problem }));
      });
    });
    await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
    const address = stub.address();
    if (address === null || typeof address === 'string') throw new Error('no address');
    url = `http://127.0.0.1:${address.port}`;
  });
  afterAll(() => new Promise((resolve) => stub.close(resolve)));

  it.each([
    ['EXPIRD', 'Error: the verification code has expired; run the login again [expired_token]'],
    ['USEDUP', 'Error: this login was already used; run the login again [invalid_grant]'],
  ])('code %s: one clear line, exit 3, nothing saved', async (code, line) => {
    const fresh = new TempHome();
    try {
      const result = await runTrellis(['login', '--server', url, '--no-browser'], {
        env: fresh.env(),
        input: `${code}\n`,
      });
      expect(result.code).toBe(3);
      expect(result.stderr.trimEnd().split('\n').at(-1)).toBe(line);
      expect(() => fresh.readAuth()).toThrow();
    } finally {
      fresh.remove();
    }
  });
});
