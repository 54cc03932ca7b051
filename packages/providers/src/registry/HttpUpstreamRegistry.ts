import {
  BadGatewayError,
  type ProviderAddress,
  type UpstreamDownload,
  type UpstreamRegistry,
  type UpstreamVersion,
} from '@trellis/core';

export interface UpstreamRegistryOptions {
  /** The provider hostnames that may be contacted (lowercase, `host` or `host:port`). */
  hosts: readonly string[];
  /** A bearer token per hostname (from a `credentials.tfrc.json`), sent to that hostname only. */
  tokens?: Readonly<Record<string, string>>;
  /** Each registry request, headers and body (default 30 s); an archive download may take 20 times as long. */
  timeoutMs?: number;
  /** How long a service discovery answer is reused (default 10 minutes). */
  discoveryTtlMs?: number;
  fetch?: typeof fetch;
  now?: () => number;
}

const USER_AGENT = 'trellis-control-plane (provider mirror)';
const MAX_JSON_BYTES = 4 * 1024 * 1024;

function unavailable(message: string, cause?: unknown): BadGatewayError {
  return new BadGatewayError('mirror_upstream_unavailable', message, cause === undefined ? undefined : { cause });
}

/** A URL as messages show it: never its query (a signed download URL carries its grant there). */
function shown(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

/**
 * OpenTofu's Provider Registry Protocol, as `tofu init` speaks it, for the mirror's pull-through
 * (`UpstreamRegistry`): service discovery at `https://<hostname>/.well-known/terraform.json`
 * (`providers.v1`), then `<base><namespace>/<type>/versions` and
 * `…/<version>/download/<os>/<arch>`. Only the configured hostnames are contacted, only over
 * https; a hostname's token goes with requests to that hostname only, never to a download URL
 * (which may be anywhere the registry says: a release host, a signed URL) and never through a
 * redirect. Every failure is `mirror_upstream_unavailable`, naming the host and path, never a
 * token or a URL's query.
 */
export class HttpUpstreamRegistry implements UpstreamRegistry {
  private readonly hosts: ReadonlySet<string>;
  private readonly tokens: ReadonlyMap<string, string>;
  private readonly timeoutMs: number;
  private readonly discoveryTtlMs: number;
  private readonly fetchImpl: typeof fetch;
  private readonly now: () => number;
  private readonly discovered = new Map<string, { base: URL; until: number }>();

  constructor(options: UpstreamRegistryOptions) {
    this.hosts = new Set(options.hosts.map((host) => host.toLowerCase()));
    this.tokens = new Map(Object.entries(options.tokens ?? {}).map(([host, token]) => [host.toLowerCase(), token]));
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.discoveryTtlMs = options.discoveryTtlMs ?? 10 * 60_000;
    this.fetchImpl = options.fetch ?? ((...args) => fetch(...args));
    this.now = options.now ?? Date.now;
  }

  async versions(provider: ProviderAddress): Promise<UpstreamVersion[]> {
    const base = await this.base(provider.hostname);
    const url = new URL(`${enc(provider.namespace)}/${enc(provider.type)}/versions`, base);
    const body = await this.json(provider.hostname, url);
    if (body === null) return [];
    const versions = (body as { versions?: unknown }).versions;
    if (!Array.isArray(versions)) throw unavailable(`${shown(url)} is not a provider versions list`);
    return versions.flatMap((entry): UpstreamVersion[] => {
      const { version, platforms } = (entry ?? {}) as { version?: unknown; platforms?: unknown };
      if (typeof version !== 'string') return [];
      const list = Array.isArray(platforms) ? platforms : [];
      return [
        {
          version,
          platforms: list.flatMap((platform) => {
            const { os, arch } = (platform ?? {}) as { os?: unknown; arch?: unknown };
            return typeof os === 'string' && typeof arch === 'string' ? [{ os, arch }] : [];
          }),
        },
      ];
    });
  }

  async download(
    provider: ProviderAddress,
    version: string,
    os: string,
    arch: string,
  ): Promise<UpstreamDownload | null> {
    const base = await this.base(provider.hostname);
    const path = [provider.namespace, provider.type, version, 'download', os, arch].map(enc).join('/');
    const url = new URL(path, base);
    const body = await this.json(provider.hostname, url);
    if (body === null) return null;
    const answer = body as Record<string, unknown>;
    const text = (field: string): string => {
      const value = answer[field];
      if (typeof value !== 'string' || value === '') throw unavailable(`${shown(url)} has no ${field}`);
      return value;
    };
    const link = (field: string): string => {
      const resolved = new URL(text(field), url);
      if (resolved.protocol !== 'https:') throw unavailable(`${shown(url)}: ${field} is not an https URL`);
      return resolved.href;
    };
    const shasum = text('shasum').toLowerCase();
    if (!/^[0-9a-f]{64}$/.test(shasum)) throw unavailable(`${shown(url)}: shasum is not a sha256`);
    const keys = (answer.signing_keys as { gpg_public_keys?: unknown } | undefined)?.gpg_public_keys;
    return {
      filename: text('filename'),
      download_url: link('download_url'),
      shasum,
      shasums_url: link('shasums_url'),
      shasums_signature_url: link('shasums_signature_url'),
      signing_keys: (Array.isArray(keys) ? keys : []).flatMap((key) => {
        const armor = (key ?? {}) as { ascii_armor?: unknown };
        return typeof armor.ascii_armor === 'string' ? [armor.ascii_armor] : [];
      }),
    };
  }

  async file(url: string, maxBytes: number): Promise<Uint8Array> {
    const target = this.httpsUrl(url);
    const signal = AbortSignal.timeout(this.timeoutMs);
    const response = await this.get(target, {}, signal, 'follow');
    const chunks: Uint8Array[] = [];
    let size = 0;
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        size += chunk.byteLength;
        if (size > maxBytes) break;
        chunks.push(chunk);
      }
    } catch (error) {
      throw unavailable(`${shown(target)} broke off`, error);
    }
    if (size > maxBytes) throw unavailable(`${shown(target)} is larger than ${maxBytes} bytes`);
    return Buffer.concat(chunks);
  }

  async archive(url: string): Promise<AsyncIterable<Uint8Array>> {
    const target = this.httpsUrl(url);
    const response = await this.get(target, {}, AbortSignal.timeout(this.timeoutMs * 20), 'follow');
    const body = response.body as unknown as AsyncIterable<Uint8Array>;
    return (async function* () {
      try {
        yield* body;
      } catch (error) {
        throw unavailable(`the download of ${shown(target)} broke off`, error);
      }
    })();
  }

  /** `providers.v1` of a hostname, by service discovery, kept a while. */
  private async base(hostname: string): Promise<URL> {
    const host = hostname.toLowerCase();
    if (!this.hosts.has(host)) throw unavailable(`${hostname} is not an upstream registry of this mirror`);
    const cached = this.discovered.get(host);
    if (cached && cached.until > this.now()) return cached.base;
    const url = new URL(`https://${host}/.well-known/terraform.json`);
    if (url.host !== host) throw unavailable(`${hostname} is not a registry host name`);
    const body = await this.json(host, url);
    const service = body === null ? undefined : (body as Record<string, unknown>)['providers.v1'];
    if (typeof service !== 'string') throw unavailable(`${host} has no provider registry (providers.v1)`);
    const base = new URL(service.endsWith('/') ? service : `${service}/`, url);
    if (base.protocol !== 'https:') throw unavailable(`the provider registry of ${host} is not served over https`);
    this.discovered.set(host, { base, until: this.now() + this.discoveryTtlMs });
    return base;
  }

  /** A registry JSON document; null for a 404. The hostname's token goes along only to that hostname. */
  private async json(hostname: string, url: URL): Promise<unknown> {
    const token = url.host === hostname ? this.tokens.get(hostname) : undefined;
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (token) headers.Authorization = `Bearer ${token}`;
    const signal = AbortSignal.timeout(this.timeoutMs);
    const response = await this.get(url, headers, signal, token ? 'manual' : 'follow', true);
    if (response.status === 404) {
      await response.body?.cancel();
      return null;
    }
    let text = '';
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        text += Buffer.from(chunk).toString('utf8');
        if (text.length > MAX_JSON_BYTES) throw unavailable(`${shown(url)} answered more than ${MAX_JSON_BYTES} bytes`);
      }
      return JSON.parse(text) as unknown;
    } catch (error) {
      if (error instanceof BadGatewayError) throw error;
      throw unavailable(`${shown(url)} did not answer JSON`, error);
    }
  }

  private async get(
    url: URL,
    headers: Record<string, string>,
    signal: AbortSignal,
    redirect: 'manual' | 'follow',
    allowNotFound = false,
  ): Promise<Response> {
    let response: Response;
    try {
      response = await this.fetchImpl(url, {
        method: 'GET',
        headers: { 'User-Agent': USER_AGENT, ...headers },
        redirect,
        signal,
      });
    } catch (error) {
      throw unavailable(`${shown(url)} cannot be reached`, error);
    }
    if (response.url && new URL(response.url).protocol !== 'https:') {
      await response.body?.cancel();
      throw unavailable(`${shown(url)} redirected to a URL that is not https`);
    }
    if ((allowNotFound && response.status === 404) || (response.ok && response.body)) return response;
    await response.body?.cancel();
    const redirected = response.status >= 300 && response.status < 400;
    throw unavailable(
      redirected
        ? `${shown(url)} answered a redirect, which is not followed with the host's token`
        : `${shown(url)} answered ${response.status}`,
    );
  }

  private httpsUrl(value: string): URL {
    let url: URL;
    try {
      url = new URL(value);
    } catch (error) {
      throw unavailable('the registry named a download that is not a URL', error);
    }
    if (url.protocol !== 'https:') throw unavailable(`${shown(url)} is not an https URL`);
    return url;
  }
}

function enc(part: string): string {
  return encodeURIComponent(part);
}
