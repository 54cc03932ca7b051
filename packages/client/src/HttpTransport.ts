import { type ProblemBody, TrellisApiError, TrellisConnectionError, TrellisRedirectError } from './errors.js';

/** How the client proves who it is; each kind of caller of SPEC §5. */

export type ClientAuth =
  | { kind: 'none' }
  | {
      kind: 'bearer';
      /** The current access token (may refresh it first). */
      accessToken: () => string | Promise<string>;
      /** Called once on a `401`; resolve true when a new token is available to retry with. */
      onUnauthorized?: () => Promise<boolean>;
    }
  | { kind: 'worker'; workerId: string; workerToken: string }
  | { kind: 'release'; secret: string }
  | { kind: 'cookie'; cookie: string; origin: string };

export interface ClientOptions {
  /** Base URL of the control plane, e.g. `https://trellis.example.com` (a path prefix is kept). */
  baseUrl: string;
  auth?: ClientAuth;
  userAgent?: string;
  /** Per-request timeout for ordinary calls (default 30 s); streams and long polls add their own. */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** One page of a list endpoint (issue 10 §2) and the cursor of the next, null on the last. */

export interface ListPage<T> {
  items: T[];
  next_cursor: string | null;
}

/** Which page of a list: `limit` 1 to 200 (server default 50), `cursor` from the previous page. */

export type PageOptions = {
  limit?: number;
  cursor?: string;
};

/** The cursor of the `rel="next"` target of an RFC 8288 `Link` header, or null. */

export function nextCursorOf(link: string | null): string | null {
  if (link === null) return null;
  for (const part of link.split(/,(?=\s*<)/)) {
    const match = /^\s*<([^>]*)>(.*)$/.exec(part);
    if (!match || !/;\s*rel="?next"?(\s*;|\s*$)/.test(match[2] ?? '')) continue;
    return new URL(match[1] ?? '', 'http://trellis.invalid').searchParams.get('cursor');
  }
  return null;
}

export interface RequestOptions {
  body?: unknown;
  query?: Record<string, string | number | undefined>;
  auth?: ClientAuth;
  signal?: AbortSignal;
  timeoutMs?: number;
  headers?: Record<string, string>;
  rawBody?: NonNullable<RequestInit['body']>;
}

/**
 * The HTTP of every Trellis client: auth headers, timeouts, one refresh-and-retry on `401`, never a
 * followed redirect, problem+json errors as `TrellisApiError`, and paged lists.
 */
export class HttpTransport {
  readonly baseUrl: string;
  protected readonly auth: ClientAuth;
  protected readonly fetchImpl: typeof fetch;
  protected readonly timeoutMs: number;
  protected readonly userAgent: string;

  constructor(options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.auth = options.auth ?? { kind: 'none' };
    this.fetchImpl = options.fetch ?? fetch;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.userAgent = options.userAgent ?? 'trellis-client';
  }
  // ---- plumbing
  /** One page of a list endpoint: `{ [key]: items }` and the `Link: <…>; rel="next"` header. */
  protected async listPage<T>(
    path: string,
    key: string,
    query: Record<string, string | number | undefined>,
  ): Promise<ListPage<T>> {
    const response = await this.send('GET', path, { query });
    const body = (await response.json()) as Record<string, T[]>;
    return { items: body[key] ?? [], next_cursor: nextCursorOf(response.headers.get('link')) };
  }

  /** Every item of a list endpoint from `query.cursor` on, one page request at a time. */
  protected async *walk<T>(
    path: string,
    key: string,
    query: Record<string, string | number | undefined>,
  ): AsyncGenerator<T> {
    let cursor = query.cursor;
    do {
      const page = await this.listPage<T>(path, key, { ...query, cursor });
      yield* page.items;
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
  }

  protected async json<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const response = await this.send(method, path, options);
    if (response.status === 204) return undefined as T;
    return (await response.json()) as T;
  }

  /**
   * Sends a request; a `401` on bearer auth triggers one refresh-and-retry. Redirects are never
   * followed (`TrellisRedirectError`): every request may carry a credential, and the API itself
   * never redirects, so a redirect is a misconfigured URL or someone else's server.
   */
  protected async send(method: string, path: string, options: RequestOptions): Promise<Response> {
    const auth = options.auth ?? this.auth;
    let response = await this.attempt(method, path, options, auth);
    if (
      response.status === 401 &&
      auth.kind === 'bearer' &&
      auth.onUnauthorized &&
      !(options.rawBody instanceof ReadableStream)
    ) {
      await response.body?.cancel();
      if (await auth.onUnauthorized()) response = await this.attempt(method, path, options, auth);
    }
    if (isRedirect(response.status)) {
      await response.body?.cancel();
      throw new TrellisRedirectError(this.urlOf(path, options).toString(), response.status, locationOf(response));
    }
    if (!response.ok) throw await this.problemOf(response);
    return response;
  }

  protected async attempt(method: string, path: string, options: RequestOptions, auth: ClientAuth): Promise<Response> {
    const url = this.urlOf(path, options);
    const headers: Record<string, string> = {
      'User-Agent': this.userAgent,
      Accept: 'application/json',
      ...options.headers,
    };
    switch (auth.kind) {
      case 'bearer':
        headers.Authorization = `Bearer ${await auth.accessToken()}`;
        break;
      case 'worker':
        headers['X-Worker-ID'] = auth.workerId;
        headers['X-Worker-Token'] = auth.workerToken;
        break;
      case 'release':
        headers.Authorization = `Bearer ${auth.secret}`;
        break;
      case 'cookie':
        headers.Cookie = auth.cookie;
        headers.Origin = auth.origin;
        break;
      case 'none':
        break;
    }
    let body: NonNullable<RequestInit['body']> | undefined = options.rawBody;
    if (body === undefined && options.body !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    const signals = [options.signal, timeoutMs > 0 ? AbortSignal.timeout(timeoutMs) : undefined].filter(
      (s): s is AbortSignal => s !== undefined,
    );
    try {
      return await this.fetchImpl(url, {
        method,
        headers,
        // Never `follow`: fetch would re-send these headers (worker token, bearer token) and the
        // body (refresh token) to the redirect's target, whatever its origin.
        redirect: 'manual',
        ...(body !== undefined ? { body } : {}),
        ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
        ...(signals.length > 0 ? { signal: AbortSignal.any(signals) } : {}),
      } as RequestInit);
    } catch (error) {
      if (options.signal?.aborted) throw error;
      throw new TrellisConnectionError(this.baseUrl, error);
    }
  }

  protected urlOf(path: string, options: RequestOptions): URL {
    const url = new URL(this.baseUrl + path);
    for (const [key, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return url;
  }

  protected async problemOf(response: Response): Promise<TrellisApiError> {
    const text = await response.text().catch(() => '');
    try {
      const parsed = JSON.parse(text) as ProblemBody;
      return new TrellisApiError({ ...parsed, status: response.status });
    } catch {
      return new TrellisApiError({
        status: response.status,
        code: `http_${response.status}`,
        detail: text.slice(0, 200) || response.statusText,
      });
    }
  }
}

/** 3xx but 304 (which a request without validators never gets); `0` is an opaque redirect (browsers). */
function isRedirect(status: number): boolean {
  return status === 0 || (status >= 300 && status < 400 && status !== 304);
}

function locationOf(response: Response): string | null {
  const location = response.headers.get('location');
  if (!location) return null;
  try {
    return new URL(location, response.url || undefined).toString();
  } catch {
    return location;
  }
}

/** `orgId: '<uuid>'` lists one organization's records; `'personal'` the caller's own. */
export interface OwnerOptions {
  orgId?: string;
}

export function ownerQuery<T extends OwnerOptions & { org_id?: string }>(
  options: T,
): Record<string, string | number | undefined> {
  const { orgId, ...rest } = options;
  const query = rest as Record<string, string | number | undefined>;
  return orgId === undefined ? query : { ...query, org_id: orgId };
}

export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}
