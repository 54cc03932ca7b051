import type {
  ClaimedJob,
  ExchangeResult,
  HeartbeatAnswer,
  Job,
  JobStatus,
  JobType,
  JsonObject,
  LogChunk,
  LogPage,
  Registration,
  StreamType,
  TokenPair,
  Vine,
  VineView,
  VineyardView,
  WorkerMode,
  WorkerRelease,
  WorkerView,
} from '@trellis/core';
import { type ProblemBody, TrellisApiError, TrellisConnectionError } from './errors.js';
import { readServerSentEvents } from './sse.js';

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

export interface CreateConfigurationInput {
  name: string;
  vineyard_id: string;
  project_name?: string;
  source: { type: 'git'; url: string; ref?: string; path?: string } | { type: 'inline'; files: Record<string, string> };
  variables?: Record<string, string | { value: string; sensitive?: boolean }>;
  engine?: 'tofu' | 'terraform' | { name: 'tofu' | 'terraform'; version?: string | null };
  cloud_identity_id?: string;
  cloud_identity?: { provider?: 'aws'; role_arn: string; external_id?: string };
}

export interface CreateJobInput {
  job_type: JobType;
  configuration_id?: string;
  assigned_worker_id?: string;
  plan_job_id?: string;
  target_worker_id?: string;
}

export type LogStreamEvent =
  | { type: 'log'; chunk: LogChunk }
  | { type: 'status'; status: JobStatus; error_message: string | null }
  | { type: 'end'; status: JobStatus };

interface RequestOptions {
  body?: unknown;
  query?: Record<string, string | number | undefined>;
  auth?: ClientAuth;
  signal?: AbortSignal;
  timeoutMs?: number;
  headers?: Record<string, string>;
  rawBody?: NonNullable<RequestInit['body']>;
}

/** A typed client of every endpoint of the Trellis API; errors become `TrellisApiError`. */
export class TrellisClient {
  readonly baseUrl: string;
  private readonly auth: ClientAuth;
  private readonly fetchImpl: typeof fetch;
  private readonly timeoutMs: number;
  private readonly userAgent: string;

  constructor(options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.auth = options.auth ?? { kind: 'none' };
    this.fetchImpl = options.fetch ?? fetch;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.userAgent = options.userAgent ?? 'trellis-client';
  }

  // ---- device login and tokens (SPEC §4.1)
  generateCliLogin(deviceCode: string): Promise<{ verification_code: string; expires_at: string }> {
    return this.json('POST', '/api/auth/cli/generate', { body: { device_code: deviceCode } });
  }
  exchangeCliLogin(input: { device_code: string; verification_code: string }): Promise<ExchangeResult> {
    return this.json('POST', '/api/auth/cli/exchange', { body: input, auth: { kind: 'none' } });
  }
  refreshTokens(refreshToken: string): Promise<TokenPair> {
    return this.json('POST', '/api/auth/cli/refresh', {
      body: { refresh_token: refreshToken },
      auth: { kind: 'none' },
    });
  }
  async logout(refreshToken: string): Promise<void> {
    await this.json('POST', '/api/auth/cli/logout', { body: { refresh_token: refreshToken }, auth: { kind: 'none' } });
  }
  whoami(): Promise<{ id: string; email: string; name: string }> {
    return this.json('GET', '/api/cli/whoami');
  }

  // ---- vineyards and configurations (SPEC §4.3)
  async listVineyards(): Promise<VineyardView[]> {
    return (await this.json<{ vineyards: VineyardView[] }>('GET', '/api/cli/vineyards')).vineyards;
  }
  createVineyard(name: string): Promise<VineyardView> {
    return this.json('POST', '/api/cli/vineyards', { body: { name } });
  }
  getVineyard(id: string): Promise<VineyardView> {
    return this.json('GET', `/api/cli/vineyards/${encodeURIComponent(id)}`);
  }
  async listConfigurations(): Promise<Vine[]> {
    return (await this.json<{ configurations: Vine[] }>('GET', '/api/cli/configurations')).configurations;
  }
  getConfiguration(nameOrId: string): Promise<VineView> {
    return this.json('GET', `/api/cli/configurations/${encodeURIComponent(nameOrId)}`);
  }
  getConfigurationByProjectName(projectName: string): Promise<VineView> {
    return this.json('GET', `/api/cli/configurations/by-project-name/${encodeURIComponent(projectName)}`);
  }
  createConfiguration(input: CreateConfigurationInput): Promise<VineView> {
    return this.json('POST', '/api/cli/configurations', { body: input });
  }

  // ---- jobs
  createJob(input: CreateJobInput): Promise<Job> {
    return this.json('POST', '/api/jobs', { body: input });
  }
  async listJobs(filter: { status?: JobStatus; vineyard_id?: string } = {}): Promise<Job[]> {
    return (await this.json<{ jobs: Job[] }>('GET', '/api/jobs', { query: filter })).jobs;
  }
  getJob(id: string): Promise<Job> {
    return this.json('GET', `/api/cli/jobs/${encodeURIComponent(id)}`);
  }
  getJobLogs(id: string, page: { after?: number; limit?: number } = {}): Promise<LogPage> {
    return this.json('GET', `/api/cli/jobs/${encodeURIComponent(id)}/logs`, { query: page });
  }
  cancelJob(id: string): Promise<Job> {
    return this.json('POST', `/api/cli/jobs/${encodeURIComponent(id)}/cancel`);
  }

  /**
   * Follows a job's log live (SSE). Ends after the `end` event; pass `after` (or resume with the
   * last chunk id) to continue where an earlier stream stopped.
   */
  async *streamJobLogs(
    id: string,
    options: { after?: number; signal?: AbortSignal } = {},
  ): AsyncGenerator<LogStreamEvent> {
    const response = await this.send('GET', `/api/jobs/${encodeURIComponent(id)}/logs/stream`, {
      query: { after: options.after },
      headers: { Accept: 'text/event-stream' },
      timeoutMs: 0,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (!response.body) return;
    for await (const event of readServerSentEvents(response.body)) {
      const data = JSON.parse(event.data);
      if (event.event === 'log') yield { type: 'log', chunk: data as LogChunk };
      else if (event.event === 'status')
        yield { type: 'status', status: data.status, error_message: data.error_message };
      else if (event.event === 'end') {
        yield { type: 'end', status: data.status };
        return;
      }
    }
  }

  // ---- workers
  async listWorkers(): Promise<WorkerView[]> {
    return (await this.json<{ workers: WorkerView[] }>('GET', '/api/cli/workers')).workers;
  }
  registerWorker(input: { name: string; mode?: WorkerMode }): Promise<Registration> {
    return this.json('POST', '/api/cli/workers', { body: input });
  }
  getWorker(id: string): Promise<WorkerView> {
    return this.json('GET', `/api/cli/workers/${encodeURIComponent(id)}`);
  }

  // ---- repositories at the user's git providers (SPEC §4.3)
  async listRepositories(provider: 'github' | 'gitlab' | 'bitbucket'): Promise<JsonObject[]> {
    const path = `/api/cli/repositories/${encodeURIComponent(provider)}`;
    return (await this.json<{ repositories: JsonObject[] }>('GET', path)).repositories;
  }

  // ---- the agent protocol (SPEC §4.2)
  /** Registers an agent with a user's bearer token (`POST /api/workers/register`). */
  registerAgent(input: { name: string; mode?: WorkerMode }): Promise<Registration> {
    return this.json('POST', '/api/workers/register', { body: input });
  }
  /** The next job, or null; `wait` long-polls for up to that many seconds (max 30). */
  async claimJob(options: { wait?: number; signal?: AbortSignal } = {}): Promise<ClaimedJob | null> {
    const wait = options.wait ?? 0;
    const response = await this.send('POST', '/api/jobs/claim', {
      query: { wait: wait > 0 ? wait : undefined },
      timeoutMs: this.timeoutMs + wait * 1000,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (response.status === 204) return null;
    return (await response.json()) as ClaimedJob;
  }
  heartbeat(version: string): Promise<HeartbeatAnswer> {
    return this.json('POST', '/api/workers/heartbeat', { body: { version } });
  }
  getJobForAgent(id: string): Promise<Job> {
    return this.json('GET', `/api/jobs/${encodeURIComponent(id)}`);
  }
  reportStatus(
    id: string,
    report: { status: Exclude<JobStatus, 'QUEUED'>; execution_metadata?: JsonObject; error_message?: string },
  ): Promise<Job> {
    return this.json('PUT', `/api/jobs/${encodeURIComponent(id)}/status`, { body: report });
  }
  appendLog(id: string, chunk: string, streamType: StreamType): Promise<{ id: number; job_status: JobStatus }> {
    return this.json('POST', `/api/jobs/${encodeURIComponent(id)}/logs`, {
      body: { log_chunk: chunk, stream_type: streamType },
    });
  }
  readLogs(id: string, page: { after?: number; limit?: number } = {}): Promise<LogPage> {
    return this.json('GET', `/api/jobs/${encodeURIComponent(id)}/logs`, { query: page });
  }
  /** Streams the plan file up; `size` lets the server refuse an oversized file before reading it. */
  uploadPlanArtifact(
    id: string,
    body: Uint8Array | ReadableStream<Uint8Array>,
    size?: number,
  ): Promise<{ job_id: string; size: number; sha256: string }> {
    return this.json('POST', `/api/jobs/${encodeURIComponent(id)}/plan-artifact`, {
      rawBody: body as NonNullable<RequestInit['body']>,
      headers: {
        'Content-Type': 'application/octet-stream',
        ...(size !== undefined ? { 'Content-Length': String(size) } : {}),
      },
      timeoutMs: 0,
    });
  }
  async downloadPlanArtifact(id: string): Promise<{ body: ReadableStream<Uint8Array>; size: number; sha256: string }> {
    const response = await this.send('GET', `/api/jobs/${encodeURIComponent(id)}/plan-artifact`, { timeoutMs: 0 });
    if (!response.body) throw new TrellisApiError({ status: 502, code: 'empty_body', detail: 'no artifact body' });
    return {
      body: response.body,
      size: Number(response.headers.get('content-length')),
      sha256: (response.headers.get('etag') ?? '').replaceAll('"', ''),
    };
  }
  getWorkerForAgent(id: string): Promise<WorkerView> {
    return this.json('GET', `/api/workers/${encodeURIComponent(id)}`);
  }
  updateWorkerMetadata(id: string, metadata: JsonObject): Promise<WorkerView> {
    return this.json('POST', `/api/workers/${encodeURIComponent(id)}/metadata`, { body: metadata });
  }

  // ---- CI-only (SPEC §4.4)
  publishRelease(input: { version: string; release_notes: string }): Promise<WorkerRelease> {
    return this.json('POST', '/api/releases/worker', { body: input });
  }
  async listReleases(): Promise<WorkerRelease[]> {
    return (await this.json<{ releases: WorkerRelease[] }>('GET', '/api/releases/worker')).releases;
  }
  registerTendril(input: { name: string; owner_id: string; metadata?: JsonObject }): Promise<Registration> {
    return this.json('POST', '/api/tendrils/register', { body: input });
  }

  // ---- plumbing
  private async json<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const response = await this.send(method, path, options);
    if (response.status === 204) return undefined as T;
    return (await response.json()) as T;
  }

  /** Sends a request; a `401` on bearer auth triggers one refresh-and-retry. */
  private async send(method: string, path: string, options: RequestOptions): Promise<Response> {
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
    if (!response.ok) throw await this.problemOf(response);
    return response;
  }

  private async attempt(method: string, path: string, options: RequestOptions, auth: ClientAuth): Promise<Response> {
    const url = new URL(this.baseUrl + path);
    for (const [key, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
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
        ...(body !== undefined ? { body } : {}),
        ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
        ...(signals.length > 0 ? { signal: AbortSignal.any(signals) } : {}),
      } as RequestInit);
    } catch (error) {
      if (options.signal?.aborted) throw error;
      throw new TrellisConnectionError(this.baseUrl, error);
    }
  }

  private async problemOf(response: Response): Promise<TrellisApiError> {
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
