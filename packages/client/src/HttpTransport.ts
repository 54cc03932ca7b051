import type { AnswerOf, BodyOf, operations, ParamsOf, QueryOf } from '@trellis/contract';
import { pathOf } from '@trellis/contract/operation';
import { type ProblemBody, TrellisApiError, TrellisConnectionError, TrellisRedirectError } from './errors.js';
import { OPERATION_ROUTES } from './operationRoutes.js';

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

/** The operations of the contract, by operationId. */
type Operations = typeof operations;
export type OperationId = keyof Operations;

type Query = Record<string, string | number | undefined>;

/**
 * What a call of an operation sends, as the contract types it: its path parameters (required
 * when its path has any), its query (only names the operation takes) and its JSON body.
 */
export type CallOptions<K extends OperationId> = Omit<RequestOptions, 'body' | 'query'> &
  (Operations[K] extends { params: object } ? { params: ParamsOf<Operations[K]> } : { params?: never }) &
  (Operations[K] extends { query: object }
    ? { query?: { [name in keyof QueryOf<Operations[K]>]?: string | number | undefined } }
    : { query?: never }) &
  (Operations[K] extends { body: object } ? { body?: BodyOf<Operations[K]> } : { body?: never });

/** What an operation answers on success, as the contract types it. */
export type Answer<K extends OperationId> = AnswerOf<Operations[K]>;

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
  // ---- plumbing: every request is an operation of the contract, named by its operationId
  /** Calls an operation and reads its JSON answer (`undefined` for `204`). */
  protected async call<K extends OperationId>(
    id: K,
    ...[options]: OptionalIfEmpty<CallOptions<K>>
  ): Promise<Answer<K>> {
    const response = await this.request(id, (options ?? {}) as CallOptions<K>);
    if (response.status === 204) return undefined as Answer<K>;
    return (await response.json()) as Answer<K>;
  }

  /** Sends an operation's request and hands back the response (streams, raw bodies, statuses). */
  protected request<K extends OperationId>(id: K, options: CallOptions<K>): Promise<Response> {
    const [method, path] = OPERATION_ROUTES[id];
    const { params, ...rest } = options as CallOptions<K> & { params?: Record<string, string | number> };
    return this.send(method, pathOf({ path }, params), rest as RequestOptions);
  }

  /** One page of a list operation: `{ [key]: items }` and the `Link: <…>; rel="next"` header. */
  protected async listPage<K extends OperationId, Key extends keyof NonNullable<Answer<K>>>(
    id: K,
    key: Key,
    options: CallOptions<K>,
  ): Promise<ListPage<ItemOf<Answer<K>, Key>>> {
    const response = await this.request(id, options);
    const body = (await response.json()) as Record<Key, ItemOf<Answer<K>, Key>[] | undefined>;
    return { items: body[key] ?? [], next_cursor: nextCursorOf(response.headers.get('link')) };
  }

  /** Every item of a list operation from `query.cursor` on, one page request at a time. */
  protected async *walk<K extends OperationId, Key extends keyof NonNullable<Answer<K>>>(
    id: K,
    key: Key,
    options: CallOptions<K>,
  ): AsyncGenerator<ItemOf<Answer<K>, Key>> {
    const query = (options.query ?? {}) as Query;
    let cursor = query.cursor;
    do {
      const page = await this.listPage(id, key, { ...options, query: { ...query, cursor } } as CallOptions<K>);
      yield* page.items;
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
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

/** The items of a list answer's `key`. */
type ItemOf<A, Key extends PropertyKey> = NonNullable<A> extends { [k in Key]?: (infer T)[] } ? T : never;

/** The options argument may be left out when nothing in it is required. */
type OptionalIfEmpty<T> = object extends T ? [options?: T] : [options: T];

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
): Omit<T, 'orgId'> & { org_id?: string } {
  const { orgId, ...rest } = options;
  return orgId === undefined ? rest : { ...rest, org_id: orgId };
}

export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}
