import { execFileSync, spawn } from 'node:child_process';
import { timingSafeEqual } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * A real git server on loopback for clone tests (issue 13): the system git's `git http-backend`
 * (smart HTTP, run as CGI) behind a node HTTPS server with a throwaway self-signed certificate —
 * HTTPS because agents refuse plain-http git sources. Every request needs HTTP Basic auth (unless `public`) with
 * the given username and password. Credentials are checked, counted, never logged or kept.
 */
export interface GitServer {
  /** `https://127.0.0.1:<port>` */
  origin: string;
  /** The certificate git must trust: `GIT_SSL_CAINFO=<caFile>` in git's environment. */
  caFile: string;
  /** The clone URL of a repository `name` (`<origin>/<name>.git`). */
  url(name: string): string;
  /** A bare repository with one commit per entry (files written over the previous commit's); the SHAs in order. */
  createRepo(name: string, commits: Record<string, string>[], branch?: string): string[];
  /**
   * The `.tar.gz` of repository `name` at `ref` (a commit or branch), wrapped in one directory as
   * GitHub's tarball endpoint answers it (`<name>-<short sha>/`): what a provider stand-in serves.
   */
  archive(name: string, ref: string): Buffer;
  /** One more commit on `branch` of repository `name`; its SHA. */
  commit(name: string, files: Record<string, string>, branch?: string): string;
  /** What the server saw so far. */
  readonly stats: GitServerStats;
  stop(): Promise<void>;
}

export interface GitServerStats {
  requests: number;
  /** Requests that presented an `Authorization: Basic` header (right or wrong). */
  withCredentials: number;
  /** Requests whose credentials were the right ones. */
  authorized: number;
  /** Request paths with their answer status (no credentials in them), for assertions. */
  log: { method: string; path: string; status: number }[];
}

export interface GitServerOptions {
  username: string;
  password: string;
  /**
   * `uploadpack.allowReachableSHA1InWant` of the repositories (default true). False also makes the
   * server speak protocol v0 only (it ignores `Git-Protocol`): v2 serves any reachable commit
   * whatever that setting says, so only a v0 server refuses a commit it does not advertise.
   */
  allowReachableSha1InWant?: boolean;
  /**
   * A public repository host: a request without credentials is served too (as a public repository,
   * or a fork of one, is cloned by anyone); wrong credentials are still refused.
   */
  public?: boolean;
}

const GIT_IDENTITY = {
  GIT_AUTHOR_NAME: 'Trellis Test',
  GIT_AUTHOR_EMAIL: 'test@trellis.invalid',
  GIT_COMMITTER_NAME: 'Trellis Test',
  GIT_COMMITTER_EMAIL: 'test@trellis.invalid',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
};

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A self-signed certificate for 127.0.0.1 and localhost, made with the system's openssl. */
function selfSignedCertificate(dir: string): { key: string; cert: string; caFile: string } {
  const keyFile = join(dir, 'key.pem');
  const caFile = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      caFile,
      '-days',
      '2',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ],
    { stdio: 'ignore' },
  );
  return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(caFile, 'utf8'), caFile };
}

export async function startGitServer(options: GitServerOptions): Promise<GitServer> {
  const root = mkdtempSync(join(tmpdir(), 'trellis-git-server-'));
  const repos = join(root, 'repos');
  mkdirSync(repos);
  const tls = selfSignedCertificate(root);
  const execPath = execFileSync('git', ['--exec-path'], { encoding: 'utf8' }).trim();
  const backend = join(execPath, 'git-http-backend');
  const stats: GitServerStats = { requests: 0, withCredentials: 0, authorized: 0, log: [] };

  const server: Server = createServer({ key: tls.key, cert: tls.cert }, (request, response) => {
    stats.requests += 1;
    const url = new URL(request.url ?? '/', 'https://127.0.0.1');
    const record = (status: number) => stats.log.push({ method: request.method ?? '', path: url.pathname, status });
    const header = request.headers.authorization ?? '';
    let authorized = false;
    if (header.startsWith('Basic ')) {
      stats.withCredentials += 1;
      const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      authorized =
        colon >= 0 &&
        sameSecret(decoded.slice(0, colon), options.username) &&
        sameSecret(decoded.slice(colon + 1), options.password);
    }
    if (!authorized && !(options.public === true && header === '')) {
      record(401);
      response.writeHead(401, { 'WWW-Authenticate': 'Basic realm="trellis-test-git"', 'Content-Type': 'text/plain' });
      response.end('authentication required\n');
      return;
    }
    if (authorized) stats.authorized += 1;
    const child = spawn(backend, [], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        ...GIT_IDENTITY,
        GIT_PROJECT_ROOT: repos,
        GIT_HTTP_EXPORT_ALL: '1',
        REQUEST_METHOD: request.method ?? 'GET',
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: request.headers['content-type'] ?? '',
        REMOTE_USER: options.username,
        REMOTE_ADDR: request.socket.remoteAddress ?? '127.0.0.1',
        GATEWAY_INTERFACE: 'CGI/1.1',
        SERVER_PROTOCOL: 'HTTP/1.1',
        ...(request.headers['git-protocol'] && options.allowReachableSha1InWant !== false
          ? { GIT_PROTOCOL: String(request.headers['git-protocol']) }
          : {}),
        ...(request.headers['content-encoding']
          ? { HTTP_CONTENT_ENCODING: String(request.headers['content-encoding']) }
          : {}),
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    request.pipe(child.stdin);
    let head = Buffer.alloc(0);
    let headersDone = false;
    child.stdout.on('data', (chunk: Buffer) => {
      if (headersDone) {
        response.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      let end = head.indexOf('\r\n\r\n');
      let skip = 4;
      if (end < 0) {
        end = head.indexOf('\n\n');
        skip = 2;
      }
      if (end < 0) return;
      headersDone = true;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, end).toString('utf8').split(/\r?\n/)) {
        const colon = line.indexOf(':');
        if (colon < 0) continue;
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10) || 200;
        else headers[name] = value;
      }
      record(status);
      response.writeHead(status, headers);
      response.write(head.subarray(end + skip));
    });
    child.stderr.resume();
    child.once('close', () => {
      if (!headersDone) {
        record(500);
        response.writeHead(500, { 'Content-Type': 'text/plain' });
      }
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', args, { cwd, env: { ...process.env, ...GIT_IDENTITY }, encoding: 'utf8' }).trim();
  const workTree = (name: string) => join(root, 'work', name);

  const commit = (name: string, files: Record<string, string>, branch = 'main'): string => {
    const work = workTree(name);
    for (const [file, content] of Object.entries(files)) {
      mkdirSync(dirname(join(work, file)), { recursive: true });
      writeFileSync(join(work, file), content);
    }
    git(work, 'checkout', '--quiet', '-B', branch);
    git(work, 'add', '--all');
    git(work, 'commit', '--quiet', '--allow-empty', '-m', `commit ${Object.keys(files).join(', ')}`);
    git(work, 'push', '--quiet', '--force', 'origin', `HEAD:refs/heads/${branch}`);
    return git(work, 'rev-parse', 'HEAD');
  };

  return {
    origin,
    caFile: tls.caFile,
    stats,
    url: (name) => `${origin}/${name}.git`,
    createRepo(name, commits, branch = 'main') {
      const bare = join(repos, `${name}.git`);
      execFileSync('git', ['init', '--quiet', '--bare', `--initial-branch=${branch}`, bare], {
        env: { ...process.env, ...GIT_IDENTITY },
      });
      git(bare, 'config', 'http.receivepack', 'false');
      git(bare, 'config', 'uploadpack.allowReachableSHA1InWant', String(options.allowReachableSha1InWant ?? true));
      const work = workTree(name);
      mkdirSync(work, { recursive: true });
      git(work, 'init', '--quiet', `--initial-branch=${branch}`);
      git(work, 'remote', 'add', 'origin', bare);
      return commits.map((files) => commit(name, files, branch));
    },
    commit,
    archive(name, ref) {
      const bare = join(repos, `${name}.git`);
      const sha = git(bare, 'rev-parse', '--verify', `${ref}^{commit}`);
      return execFileSync(
        'git',
        ['archive', '--format=tar.gz', `--prefix=${name.replaceAll('/', '-')}-${sha.slice(0, 7)}/`, sha],
        {
          cwd: bare,
          env: { ...process.env, ...GIT_IDENTITY },
          maxBuffer: 64 * 1024 * 1024,
        },
      );
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(root, { recursive: true, force: true });
    },
  };
}
