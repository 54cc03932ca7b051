import { type DomainError, RateLimitedError, UnauthorizedError, UnavailableError } from '@trellis/core';

export type JsonMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export interface JsonRequestOptions {
  /** Sent as JSON. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Statuses answered to the caller (with their body, if JSON) instead of thrown. */
  allow?: readonly number[];
  /** The error for a 403 or 404 not in `allow` (a scope or role missing); else provider_unavailable. */
  denied?: (status: number) => DomainError;
}

/** What every adapter is built from. */
export interface ProviderOptions {
  clientId: string;
  clientSecret: string;
  /** Self-hosted installations and test servers; the public service when null or absent. */
  baseUrl?: string | null;
  /** Per request (default 10 s). */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

export const DEFAULT_TIMEOUT_MS = 10_000;
const USER_AGENT = 'trellis-control-plane';

/** `https://host/path/` → `https://host/path`; refuses anything that is not http(s). */
export function baseUrlOf(value: string): string {
  const url = new URL(value);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`not an http(s) URL: ${value}`);
  return url.href.replace(/\/+$/, '');
}

export interface ProviderResponse<T> {
  body: T;
  headers: Headers;
}

/**
 * Calls a provider's API and translates its failures at this edge: no caller sees a fetch
 * `TypeError` or a provider's status code, only the domain errors of the ports.
 */
export class ProviderHttp {
  private readonly fetchImpl: typeof fetch;
  private readonly timeoutMs: number;

  constructor(
    /** For messages: `GitHub`, `GitLab`, ... */
    readonly providerName: string,
    options: Pick<ProviderOptions, 'fetch' | 'timeoutMs'>,
  ) {
    this.fetchImpl = options.fetch ?? ((...args) => fetch(...args));
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /**
   * A GET with the user's token; a 401 means the token expired or was revoked. With `optional`,
   * a 403 or 404 (a scope not granted, an endpoint the installation lacks) answers a null body.
   */
  async getJson<T>(
    url: string,
    token: string,
    headers: Record<string, string> = {},
    options: { optional?: boolean } = {},
  ): Promise<ProviderResponse<T | null>> {
    const response = await this.send(url, {
      method: 'GET',
      headers: { Accept: 'application/json', ...headers, Authorization: `Bearer ${token}` },
    });
    if (response.status === 401) {
      await response.body?.cancel();
      throw new UnauthorizedError('provider_token_expired', `${this.providerName} refused the token (401)`);
    }
    this.throwIfRateLimited(response);
    if (options.optional && (response.status === 403 || response.status === 404)) {
      await response.body?.cancel();
      return { body: null, headers: response.headers };
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new UnavailableError(
        'provider_unavailable',
        `${this.providerName} answered ${response.status} for ${new URL(url).pathname}`,
      );
    }
    return { body: await this.parse<T>(response), headers: response.headers };
  }

  /**
   * A JSON request with the user's token (the git API calls of issue 13). A 401 means the token
   * expired or was revoked, a 429 (or a 403 saying so) rate limiting; a 403 or 404 goes to
   * `denied`; every other failure is provider_unavailable. A 2xx (or an `allow`ed status) answers
   * its body parsed as JSON, or null when it has none.
   */
  async sendJson<T>(
    method: JsonMethod,
    url: string,
    token: string,
    options: JsonRequestOptions = {},
  ): Promise<{ status: number; body: T | null; headers: Headers }> {
    const headers: Record<string, string> = {
      Accept: 'application/json',
      ...options.headers,
      Authorization: `Bearer ${token}`,
    };
    if (options.body !== undefined) headers['Content-Type'] = 'application/json';
    const response = await this.send(url, {
      method,
      headers,
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    });
    const allowed = options.allow?.includes(response.status) === true;
    if (!allowed) {
      if (response.status === 401) {
        await response.body?.cancel();
        throw new UnauthorizedError('provider_token_expired', `${this.providerName} refused the token (401)`);
      }
      this.throwIfRateLimited(response);
      if ((response.status === 403 || response.status === 404) && options.denied) {
        await response.body?.cancel();
        throw options.denied(response.status);
      }
      if (!response.ok) {
        await response.body?.cancel();
        throw new UnavailableError(
          'provider_unavailable',
          `${this.providerName} answered ${response.status} for ${method} ${new URL(url).pathname}`,
        );
      }
    }
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      throw new UnavailableError('provider_unavailable', `${this.providerName} broke off its answer`, { cause: error });
    }
    if (text.trim() === '') return { status: response.status, body: null, headers: response.headers };
    try {
      return { status: response.status, body: JSON.parse(text) as T, headers: response.headers };
    } catch (error) {
      if (allowed && !response.ok) return { status: response.status, body: null, headers: response.headers };
      throw new UnavailableError('provider_unavailable', `${this.providerName} answered with a body that is not JSON`, {
        cause: error,
      });
    }
  }

  /**
   * A `GET` of a (possibly large) binary body with the token, streamed: an archive of a commit.
   * The token goes to `url` only. A redirect (GitHub sends its tarballs from another host, with a
   * short-lived grant in the URL) is followed, at most three times, over https (or to `url`'s own
   * origin) and without the token; `timeoutMs` bounds the whole download, body included.
   */
  async getBinary(
    url: string,
    token: string,
    options: Pick<JsonRequestOptions, 'headers' | 'denied'> & { timeoutMs: number },
  ): Promise<AsyncIterable<Uint8Array>> {
    const signal = AbortSignal.timeout(options.timeoutMs);
    const get = (target: string, headers: Record<string, string>) =>
      this.fetchImpl(target, {
        method: 'GET',
        redirect: 'manual',
        headers: { 'User-Agent': USER_AGENT, ...headers },
        signal,
      }).catch((error: unknown) => {
        throw new UnavailableError('provider_unavailable', `${this.providerName} cannot be reached`, { cause: error });
      });
    let response = await get(url, { ...options.headers, Authorization: `Bearer ${token}` });
    let current = url;
    for (let hops = 0; response.status >= 300 && response.status < 400 && response.status !== 304; hops++) {
      const location = response.headers.get('location');
      await response.body?.cancel();
      const next = location ? new URL(location, current) : null;
      if (hops >= 3 || next === null || (next.protocol !== 'https:' && next.origin !== new URL(current).origin)) {
        throw new UnavailableError(
          'provider_unavailable',
          `${this.providerName} redirected the archive download ${next === null ? 'nowhere' : `to ${next.origin}`}, which Trellis does not follow`,
        );
      }
      current = next.toString();
      response = await get(current, {});
    }
    if (response.status === 401) {
      await response.body?.cancel();
      throw new UnauthorizedError('provider_token_expired', `${this.providerName} refused the token (401)`);
    }
    this.throwIfRateLimited(response);
    if ((response.status === 403 || response.status === 404) && options.denied) {
      await response.body?.cancel();
      throw options.denied(response.status);
    }
    if (!response.ok || !response.body) {
      await response.body?.cancel();
      throw new UnavailableError(
        'provider_unavailable',
        `${this.providerName} answered ${response.status} for the archive ${new URL(url).pathname}`,
      );
    }
    return response.body as unknown as AsyncIterable<Uint8Array>;
  }

  /**
   * A token endpoint request (form-encoded). Answers the JSON body whatever the status, since
   * OAuth errors come as `{ error }` bodies (GitHub even with 200); transport failures throw.
   */
  async postForm(
    url: string,
    form: Record<string, string>,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const response = await this.send(url, {
      method: 'POST',
      headers: { Accept: 'application/json', 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(form).toString(),
    });
    if (response.status >= 500) {
      await response.body?.cancel();
      throw new UnavailableError(
        'provider_unavailable',
        `${this.providerName} answered ${response.status} at its token endpoint`,
      );
    }
    const body = await this.parse<unknown>(response);
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new UnavailableError(
        'provider_unavailable',
        `${this.providerName} answered its token request with something that is not an object`,
      );
    }
    return { status: response.status, body: body as Record<string, unknown> };
  }

  /**
   * Every call carries a token or the client secret, so a redirect is never followed: it could
   * hand them to another origin. A provider that redirects is misconfigured (usually its base URL).
   */
  private async send(url: string, init: RequestInit): Promise<Response> {
    let response: Response;
    try {
      response = await this.fetchImpl(url, {
        ...init,
        redirect: 'manual',
        headers: { 'User-Agent': USER_AGENT, ...(init.headers as Record<string, string>) },
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      throw new UnavailableError('provider_unavailable', `${this.providerName} cannot be reached`, { cause: error });
    }
    if (
      response.type === 'opaqueredirect' ||
      (response.status >= 300 && response.status < 400 && response.status !== 304)
    ) {
      await response.body?.cancel();
      throw new UnavailableError(
        'provider_unavailable',
        `${this.providerName} answered ${new URL(url).origin} with a redirect, which Trellis does not follow with credentials; check the provider's base URL setting`,
      );
    }
    return response;
  }

  private async parse<T>(response: Response): Promise<T> {
    try {
      return (await response.json()) as T;
    } catch (error) {
      throw new UnavailableError('provider_unavailable', `${this.providerName} answered with a body that is not JSON`, {
        cause: error,
      });
    }
  }

  private throwIfRateLimited(response: Response): void {
    // GitHub answers 403 both when the hourly budget is spent and for its secondary limits (with Retry-After).
    const exhausted =
      response.status === 403 &&
      (response.headers.get('x-ratelimit-remaining') === '0' || response.headers.has('retry-after'));
    if (response.status !== 429 && !exhausted) return;
    const retryAfter = Number(response.headers.get('retry-after'));
    const reset = Number(response.headers.get('x-ratelimit-reset'));
    const seconds =
      Number.isFinite(retryAfter) && retryAfter > 0
        ? retryAfter
        : Number.isFinite(reset) && reset > 0
          ? Math.max(1, Math.ceil(reset - Date.now() / 1000))
          : 60;
    throw new RateLimitedError(`${this.providerName} rate limits this account; retry in ${seconds} s`, seconds);
  }
}

/** Follows a `next` link only on the API's own origin: the user's token never goes anywhere else. */
export function sameOriginNext(next: string | null | undefined, apiBase: string): string | null {
  if (!next) return null;
  try {
    const url = new URL(next, apiBase);
    return url.origin === new URL(apiBase).origin ? url.href : null;
  } catch {
    return null;
  }
}

/**
 * Collects items page by page until there is no next page or `limit` is reached (a provider that
 * keeps answering `next` cannot keep the control plane busy for ever).
 */
export async function collectPages<T>(
  first: string,
  limit: number,
  fetchPage: (url: string) => Promise<{ items: T[]; next: string | null }>,
): Promise<T[]> {
  const items: T[] = [];
  const seen = new Set<string>();
  let url: string | null = first;
  while (url && items.length < limit && !seen.has(url)) {
    seen.add(url);
    const page = await fetchPage(url);
    items.push(...page.items);
    url = page.next;
  }
  return items.slice(0, limit);
}

/** A provider's time as ISO-8601 UTC (`…Z`), or null when it has none or an unreadable one. */
export function isoTime(value: string | null | undefined): string | null {
  if (!value) return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}
