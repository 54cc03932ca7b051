/**
 * Issue 11 §8, packages a user can install: every publishable package packs with `npm pack`
 * (from the built tree: `npm test` builds first), the tarballs install together into an empty
 * directory, and the three programs run from there: `trellis --version`, `trellis-agent
 * --version`, and `trellis-server` answering `/healthz` and `/readyz` on SQLite.
 *
 * The install uses the npm cache first (`--prefer-offline`). better-sqlite3, an optional peer of
 * `@trellis/store-sql` that compiles for minutes, is the workspace's own build, installed from
 * its directory, scripts off (its install script would rebuild the workspace's copy in place);
 * everything else comes from the tarballs and their declared dependencies.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const INSTALL_TIMEOUT_MS = 15 * 60_000;

interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  bin?: Record<string, string>;
  files?: string[];
}

const publishable = readdirSync(join(repoRoot, 'packages'))
  .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(repoRoot, 'packages', dir, 'package.json'), 'utf8')) }))
  .filter((entry): entry is { dir: string; manifest: Manifest } => entry.manifest.private !== true);

/** The environment of the npm commands: no audit, no fund, no update notice; node headers of the system. */
const npmEnv = {
  ...process.env,
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
  npm_config_nodedir: process.env.npm_config_nodedir ?? '/usr',
};

describe('the workspace bins', () => {
  it('are committed files outside dist/, so npm install links them before the build', async () => {
    const { stdout } = await run('git', ['ls-files', 'packages'], { cwd: repoRoot });
    const committed = new Set(stdout.split('\n'));
    const bins = publishable.flatMap(({ dir, manifest }) =>
      Object.values(manifest.bin ?? {}).map((bin) => join('packages', dir, bin)),
    );
    expect(bins).toHaveLength(3);
    for (const bin of bins) {
      expect(bin).not.toMatch(/\/dist\//);
      expect(committed.has(bin), `${bin} is committed`).toBe(true);
      expect(statSync(join(repoRoot, bin)).mode & 0o111, `${bin} is executable`).not.toBe(0);
    }
  });
});

describe('packed packages install into an empty directory and run', () => {
  let work: string;
  let app: string;
  let tarballs: string[] = [];
  let server: ChildProcess | undefined;

  beforeAll(async () => {
    for (const { dir, manifest } of publishable) {
      expect(existsSync(join(repoRoot, 'packages', dir, 'dist', 'index.js')), `${manifest.name} is built`).toBe(true);
    }
    work = await mkdtemp(join(tmpdir(), 'trellis-packaging-'));
    app = join(work, 'app');
    const packs = join(work, 'packs');
    await mkdir(packs);
    const { stdout } = await run(
      'npm',
      ['pack', '--json', '--pack-destination', packs, ...publishable.map(({ dir }) => `./packages/${dir}`)],
      { cwd: repoRoot, env: npmEnv, maxBuffer: 64 * 1024 * 1024 },
    );
    tarballs = (JSON.parse(stdout) as { filename: string }[]).map((pack) => join(packs, pack.filename));

    await mkdir(app);
    await writeFile(join(app, 'package.json'), `${JSON.stringify({ name: 'empty', private: true }, null, 2)}\n`);
    await run(
      'npm',
      [
        'install',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        // better-sqlite3 is linked from the workspace with its build: its install script would
        // rebuild it there (node-gyp removes build/ first), pulling the binding from under the test
        // files running beside this one. No other runtime dependency has an install script.
        '--ignore-scripts',
        ...tarballs,
        join(repoRoot, 'node_modules', 'better-sqlite3'),
      ],
      { cwd: app, env: npmEnv, maxBuffer: 64 * 1024 * 1024, timeout: INSTALL_TIMEOUT_MS },
    );
  }, INSTALL_TIMEOUT_MS + 120_000);

  afterAll(async () => {
    if (server && server.exitCode === null) server.kill('SIGKILL');
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('packs every publishable package with its built files and bin shims', async () => {
    expect(tarballs).toHaveLength(publishable.length);
    for (const { manifest } of publishable) {
      const tarball = tarballs.find((file) =>
        file.endsWith(`${manifest.name.replace('@', '').replace('/', '-')}-${manifest.version}.tgz`),
      );
      expect(tarball, manifest.name).toBeDefined();
      const { stdout } = await run('tar', ['tzf', tarball as string]);
      expect(stdout.split('\n'), manifest.name).toContain('package/dist/index.js');
      for (const bin of Object.values(manifest.bin ?? {})) {
        expect(stdout.split('\n'), `${manifest.name} bin ${bin}`).toContain(join('package', bin));
      }
    }
  });

  it('installs each package from its tarball, not from a registry', () => {
    const lock = JSON.parse(readFileSync(join(app, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { resolved?: string; version?: string }>;
    };
    for (const { manifest } of publishable) {
      const entry = lock.packages[`node_modules/${manifest.name}`];
      expect(entry?.resolved, manifest.name).toMatch(/^file:.*\.tgz$/);
    }
  });

  it('runs trellis, trellis-agent and trellis-server --version', async () => {
    const bin = join(app, 'node_modules', '.bin');
    const cli = await run(join(bin, 'trellis'), ['--version'], { cwd: app });
    expect(cli.stdout).toContain('0.1.0');
    // The agent's argument parsing may change; what is promised is that --version answers.
    const agent = await run(join(bin, 'trellis-agent'), ['--version'], { cwd: app });
    expect(agent.stdout).toMatch(/\d+\.\d+\.\d+/);
    const server = await run(join(bin, 'trellis-server'), ['--version'], { cwd: app });
    expect(server.stdout.trim()).toBe('0.1.0');
  });

  it(
    'installs the CLI and the agent globally from their tarballs, as docs/cli.md says',
    async () => {
      // The documented command: core, contract, client, cli and agent in one `npm install -g`.
      const prefix = join(work, 'global');
      const needed = ['core', 'contract', 'client', 'cli', 'agent'].map(
        (name) => tarballs.find((file) => new RegExp(`/trellis-${name}-[^/]+\\.tgz$`).test(file)) as string,
      );
      await run('npm', ['install', '-g', '--prefix', prefix, '--prefer-offline', ...needed], {
        cwd: work,
        env: npmEnv,
        maxBuffer: 64 * 1024 * 1024,
        timeout: INSTALL_TIMEOUT_MS,
      });
      expect((await run(join(prefix, 'bin', 'trellis'), ['--version'])).stdout).toContain('0.1.0');
      expect((await run(join(prefix, 'bin', 'trellis-agent'), ['--version'])).stdout).toMatch(/\d+\.\d+\.\d+/);
    },
    INSTALL_TIMEOUT_MS,
  );

  it('starts trellis-server, which answers /healthz and /readyz and stops on SIGTERM', async () => {
    const started = spawn(join(app, 'node_modules', '.bin', 'trellis-server'), [], {
      cwd: app,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        PORT: '0',
        TRELLIS_DATA_DIR: join(work, 'data'),
        TRELLIS_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    server = started;
    let output = '';
    const url = await new Promise<string>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        const match = /listening on (http:\/\/\S+)/.exec(output);
        if (match?.[1]) resolve(match[1]);
      };
      started.stdout?.on('data', onData);
      started.stderr?.on('data', onData);
      started.once('exit', (code) => reject(new Error(`trellis-server exited (${code}):\n${output}`)));
    });
    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(200);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);

    const exited = new Promise<number | null>((resolve) => started.once('exit', resolve));
    started.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(existsSync(join(work, 'data', 'trellis.db'))).toBe(true);
  });
});
