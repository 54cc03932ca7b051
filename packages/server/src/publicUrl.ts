import type { ServerConfig } from './config.js';

/**
 * The public URL of the web interface: `TRELLIS_WEB_URL`, or, when unset, this server at the port
 * it listens on. That port is known once `listen()` has bound it (`PORT=0` picks a free one), so
 * it is the one value of the configuration settled after start-up, once: by the first port bound.
 */
export class PublicUrl {
  private bound: string | null = null;

  constructor(private readonly config: Pick<ServerConfig, 'webUrl' | 'webUrlExplicit' | 'tls'>) {}

  get value(): string {
    return this.bound ?? this.config.webUrl;
  }

  /** Called by `listen()` with the port it bound; later ports change nothing. */
  bind(port: number): void {
    if (!this.config.webUrlExplicit && this.bound === null) {
      this.bound = `${this.config.tls ? 'https' : 'http'}://localhost:${port}`;
    }
  }
}

/**
 * `target` frozen, with `key` read from `get` (the public URL, known once the server listens)
 * rather than stored: readers see the URL of the bound port, and nobody can assign it.
 */
export function frozenWithLive<T extends object, K extends keyof T>(target: T, key: K, get: () => T[K]): Readonly<T> {
  Object.defineProperty(target, key, { get, enumerable: true, configurable: false });
  return Object.freeze(target);
}

/**
 * Origins the web interface may use. An explicit TRELLIS_WEB_URL is the only one; the default
 * (a server on this machine) also accepts the loopback spellings of the bound port, since a
 * browser may open it as localhost or 127.0.0.1.
 */
export function webOrigins(
  webUrl: string,
  explicit: boolean,
  boundPorts: readonly number[],
  scheme: 'http' | 'https' = 'http',
): string[] {
  const origins = [new URL(webUrl).origin];
  if (!explicit) {
    for (const port of boundPorts) {
      origins.push(`${scheme}://localhost:${port}`, `${scheme}://127.0.0.1:${port}`, `${scheme}://[::1]:${port}`);
    }
  }
  return origins;
}
