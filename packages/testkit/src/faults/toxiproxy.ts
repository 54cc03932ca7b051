/**
 * Toxiproxy (issue 30's fault harness): a TCP proxy between two of Trellis's pieces (an agent and
 * the control plane, the control plane and Postgres) whose links a scenario cuts, slows and resets
 * through Toxiproxy's HTTP API. The server is the peer `toxiproxy-server` (`scripts/peers.sh
 * toxiproxy`), started on a free loopback port; every proxy listens on a free loopback port too.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { freePort } from '../objectStorage.js';

/** `upstream`: what the client sends (requests); `downstream`: what it receives (answers). */
export type ToxicStream = 'upstream' | 'downstream';

/** The toxics the scenarios use, with their attributes (Toxiproxy's names and units). */
export type ToxicSpec =
  /** Drops every byte; closes the connection after `timeout` ms, or never when 0. Removing it closes held connections. */
  | { type: 'timeout'; attributes: { timeout: number } }
  /** Resets the connection (TCP RST) after `timeout` ms; 0: at once. */
  | { type: 'reset_peer'; attributes: { timeout: number } }
  /** Delays data by `latency` ms (± `jitter`). */
  | { type: 'latency'; attributes: { latency: number; jitter?: number } }
  /** At most `rate` KB/s. */
  | { type: 'bandwidth'; attributes: { rate: number } };

export interface Toxic {
  name: string;
  stream: ToxicStream;
}

export interface ToxicProxy {
  readonly name: string;
  /** `127.0.0.1:<port>`: where clients connect instead of the upstream. */
  readonly listen: string;
  /** `http://127.0.0.1:<port>`, for an HTTP upstream. */
  readonly url: string;
  readonly port: number;
  /** Adds a toxic to one direction (`both`: one toxic per direction, named `<name>-up`/`<name>-down`). */
  addToxic(name: string, stream: ToxicStream | 'both', spec: ToxicSpec): Promise<Toxic[]>;
  removeToxic(name: string): Promise<void>;
  /** Removes every toxic of this proxy, `bandwidth` ones first (a removed `timeout` closes the connections it held). */
  removeToxics(): Promise<void>;
  /** A cut in both directions that holds connections open and drops their bytes: `timeout` 0 each way. */
  cut(): Promise<void>;
  /** Only the answers are lost (requests still arrive): `timeout` 0 downstream. */
  loseAnswers(): Promise<void>;
  /** Heals the link: every toxic removed, so the connections a `timeout` held are closed. */
  heal(): Promise<void>;
  /** Points the proxy at another upstream (`host:port`), as a balancer does when a backend dies. */
  setUpstream(upstream: string): Promise<void>;
  /** Disabled: the listener closes and every connection is dropped (connection refused). */
  disable(): Promise<void>;
  enable(): Promise<void>;
}

export interface Toxiproxy {
  readonly apiUrl: string;
  /** A proxy to `upstream` (`host:port`) on a free loopback port. */
  createProxy(name: string, upstream: string): Promise<ToxicProxy>;
  /** Stops the server (every proxy with it). */
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 20_000;

/** Starts `toxiproxy-server` (the path from `requirePeer('toxiproxy-server')`) on a free loopback port. */
export async function startToxiproxy(binary: string): Promise<Toxiproxy> {
  const port = await freePort();
  const apiUrl = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(binary, ['-host', '127.0.0.1', '-port', String(port)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (data) => {
    output += data;
  });
  child.stderr?.on('data', (data) => {
    output += data;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`toxiproxy-server exited with ${child.exitCode}:\n${output}`);
    try {
      if ((await fetch(`${apiUrl}/version`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`toxiproxy-server did not start:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  async function api(method: string, path: string, body?: unknown): Promise<unknown> {
    const response = await fetch(`${apiUrl}${path}`, {
      method,
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`toxiproxy ${method} ${path}: ${response.status} ${text}`);
    return text === '' ? null : JSON.parse(text);
  }

  return {
    apiUrl,
    async createProxy(name, upstream) {
      const proxyPort = await freePort();
      const listen = `127.0.0.1:${proxyPort}`;
      await api('POST', '/proxies', { name, listen, upstream, enabled: true });
      const path = `/proxies/${encodeURIComponent(name)}`;
      const proxy: ToxicProxy = {
        name,
        listen,
        url: `http://${listen}`,
        port: proxyPort,
        async addToxic(toxicName, stream, spec) {
          const streams: ToxicStream[] = stream === 'both' ? ['upstream', 'downstream'] : [stream];
          const added: Toxic[] = [];
          for (const direction of streams) {
            const fullName = stream === 'both' ? `${toxicName}-${direction === 'upstream' ? 'up' : 'down'}` : toxicName;
            await api('POST', `${path}/toxics`, {
              name: fullName,
              type: spec.type,
              stream: direction,
              toxicity: 1,
              attributes: spec.attributes,
            });
            added.push({ name: fullName, stream: direction });
          }
          return added;
        },
        async removeToxic(toxicName) {
          await api('DELETE', `${path}/toxics/${encodeURIComponent(toxicName)}`);
        },
        async removeToxics() {
          // `bandwidth` first: a toxic being removed hands what it holds to the next one in its
          // chain, and a `latency` before a `bandwidth` would wait on the slow one (the API times out).
          const listed = (await api('GET', `${path}/toxics`)) as { name: string; type: string }[];
          const ordered = [
            ...listed.filter((t) => t.type === 'bandwidth'),
            ...listed.filter((t) => t.type !== 'bandwidth'),
          ];
          for (const toxic of ordered) await proxy.removeToxic(toxic.name);
        },
        async cut() {
          await proxy.addToxic('cut', 'both', { type: 'timeout', attributes: { timeout: 0 } });
        },
        async loseAnswers() {
          await proxy.addToxic('lose-answers', 'downstream', { type: 'timeout', attributes: { timeout: 0 } });
        },
        heal: () => proxy.removeToxics(),
        async setUpstream(upstream) {
          await api('POST', path, { upstream });
        },
        async disable() {
          await api('POST', path, { enabled: false });
        },
        async enable() {
          await api('POST', path, { enabled: true });
        },
      };
      return proxy;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
