/**
 * The stock `tofu` against a real `trellis-server` over TLS (issue 26): a throw-away CA made with
 * openssl, the server's certificate signed by it, `SSL_CERT_FILE` pointing the CLI at it; a temp
 * HOME per test for the CLI's credentials; a stand-in browser (fetch with a signed-in session
 * cookie) that follows the consent page and the loopback redirect of `tofu login`.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { request as httpsRequest } from 'node:https';

export interface TestCa {
  dir: string;
  caFile: string;
  certFile: string;
  keyFile: string;
}

/** A CA and a certificate for localhost and 127.0.0.1 signed by it, valid a day. */
export function makeTestCa(): TestCa {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-tfe-ca-'));
  const run = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  run(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=Trellis test CA']);
  run(['req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost']);
  writeFileSync(
    join(dir, 'ext.cnf'),
    'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n',
  );
  run([
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.pem',
    '-days',
    '1',
    '-extfile',
    'ext.cnf',
  ]);
  return { dir, caFile: join(dir, 'ca.pem'), certFile: join(dir, 'server.pem'), keyFile: join(dir, 'server.key') };
}

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** One HTTPS request that trusts the test CA (and only it); redirects are not followed. */
export function caRequest(
  ca: TestCa,
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      { method: options.method ?? 'GET', headers: options.headers, ca: readFileSync(ca.caFile) },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

export interface TofuResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A person at a terminal: their HOME (credentials), the CA, a BROWSER that writes down what it is asked to open. */
export class Terminal {
  readonly home: string;
  readonly browserFile: string;

  constructor(
    private readonly tofu: string,
    private readonly ca: TestCa,
  ) {
    this.home = mkdtempSync(join(tmpdir(), 'trellis-tfe-home-'));
    this.browserFile = join(this.home, 'opened-url');
    const browser = join(this.home, 'browser.sh');
    writeFileSync(browser, `#!/bin/sh\nprintf '%s' "$1" > '${this.browserFile}'\n`);
    chmodSync(browser, 0o755);
  }

  env(extra: Record<string, string> = {}): Record<string, string> {
    return {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: this.home,
      SSL_CERT_FILE: this.ca.caFile,
      BROWSER: join(this.home, 'browser.sh'),
      TF_IN_AUTOMATION: '1',
      CHECKPOINT_DISABLE: '1',
      ...extra,
    };
  }

  /** A new working directory with these files. */
  dir(files: Record<string, string>): string {
    const dir = mkdtempSync(join(this.home, 'work-'));
    for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
    return dir;
  }

  /** Runs tofu; `input` is written to its stdin, which stays open until it exits (the CLI stops on EOF). */
  run(
    cwd: string,
    args: string[],
    options: { input?: string; env?: Record<string, string> } = {},
  ): Promise<TofuResult> {
    const child: ChildProcess = spawn(this.tofu, args, {
      cwd,
      env: this.env(options.env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (data) => {
      stdout += data;
    });
    child.stderr?.on('data', (data) => {
      stderr += data;
    });
    if (options.input !== undefined) child.stdin?.write(options.input);
    return new Promise((resolve) => {
      child.once('exit', (code) => {
        child.stdin?.destroy();
        resolve({ code, stdout, stderr });
      });
    });
  }

  /** The API token `tofu login` saved for `host`. */
  savedToken(host: string): string | null {
    const file = join(this.home, '.terraform.d', 'credentials.tfrc.json');
    if (!existsSync(file)) return null;
    const saved = JSON.parse(readFileSync(file, 'utf8')) as { credentials: Record<string, { token: string }> };
    return saved.credentials[host]?.token ?? null;
  }

  /** Waits until the CLI asked the browser to open a URL. */
  async openedUrl(signal: AbortSignal): Promise<string> {
    while (!existsSync(this.browserFile) || readFileSync(this.browserFile, 'utf8') === '') {
      if (signal.aborted) throw new Error('the CLI never opened a browser');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return readFileSync(this.browserFile, 'utf8');
  }
}

/** The fields of the consent page's form, as a browser would send them. */
export function formFields(page: string): Record<string, string> {
  const unescaped = (value: string) =>
    value
      .replaceAll('&quot;', '"')
      .replaceAll('&#39;', "'")
      .replaceAll('&lt;', '<')
      .replaceAll('&gt;', '>')
      .replaceAll('&amp;', '&');
  return Object.fromEntries(
    [...page.matchAll(/<input type="hidden" name="([a-z_]+)" value="([^"]*)">/g)].map((match) => [
      match[1] as string,
      unescaped(match[2] as string),
    ]),
  );
}

export function fileUrl(path: string): string {
  mkdirSync(path, { recursive: true });
  return pathToFileURL(path).href;
}

/**
 * A `fetch` that trusts the test CA (and only it), for clients (`TrellisClient`) of a server
 * served with it: Node's own fetch reads its CAs once, at start.
 */
export function caFetch(ca: TestCa): typeof fetch {
  const trusted = readFileSync(ca.caFile);
  return (input, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      const url = input instanceof Request ? input.url : String(input);
      const headers = new Headers(init.headers);
      const req = httpsRequest(
        url,
        {
          method: init.method ?? 'GET',
          headers: Object.fromEntries(headers.entries()),
          ca: trusted,
          signal: init.signal ?? undefined,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const answer = new Headers();
            for (const [name, value] of Object.entries(res.headers)) {
              for (const one of [value ?? []].flat()) answer.append(name, one);
            }
            const status = res.statusCode ?? 0;
            const body = status === 204 || status === 304 ? null : Buffer.concat(chunks);
            resolve(new Response(body, { status, statusText: res.statusMessage ?? '', headers: answer }));
          });
        },
      );
      req.on('error', reject);
      const body = init.body;
      if (body === undefined || body === null) req.end();
      else if (typeof body === 'string' || body instanceof Uint8Array) req.end(body);
      else reject(new TypeError('caFetch sends string and byte bodies only'));
    });
}
