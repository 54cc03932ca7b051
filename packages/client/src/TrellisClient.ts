import type {
  ApiTokenView,
  AuditEntryView,
  AuditListRequest,
  ArtifactAnswer,
  AgentJobView,
  ClaimAnswer,
  CreateConfigurationRequest,
  DeletedConfigurationAnswer,
  CreateJobRequest,
  CreatedTokenAnswer,
  CreatedNotificationAnswer,
  CreateNotificationRequest,
  CreatePolicyRequest,
  PolicyAnswer,
  PolicyDetailAnswer,
  UpdatePolicyRequest,
  DeliveryAnswer,
  NotificationAnswer,
  CreateTokenRequest,
  ExchangeAnswer,
  ExchangeRequest,
  GenerateAnswer,
  HeartbeatAnswerView,
  JobListRequest,
  JobSummaryView,
  JobDetailView,
  JobView,
  LogEntryView,
  LogPageRequest,
  LogPageView,
  LogBatchAnswer,
  LogPostAnswer,
  PublishReleaseRequest,
  RegisterWorkerRequest,
  RegistrationAnswer,
  ReleaseView,
  RepositoryView,
  ConnectVcsAnswer,
  ConnectVcsRequest,
  VcsConnectionAnswer,
  StatusReport,
  TendrilRequest,
  TokenPairAnswer,
  UpdateConfigurationRequest,
  VineDetailView,
  VineSummaryView,
  VineyardDetailView,
  VineyardSummaryView,
  WhoAmIAnswer,
  WorkerRecordView,
  AddMemberRequest,
  InvitationView,
  OrgMemberView,
  OrgRoleName,
  OrgView,
  StateHistoryView,
  StateUnlockView,
  StateVersionView,
} from '@trellis/contract';
import type { GitProvider, JobStatus, JsonObject, StreamType, VcsFeedbackView } from '@trellis/core';
import { type ProblemBody, TrellisApiError, TrellisConnectionError, TrellisRedirectError } from './errors.js';
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

/** Filters of `GET /api/jobs` (the contract's query without the page). */
export type JobListFilter = JobListRequest;

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

/** The bodies of `POST /api/cli/configurations` and `POST /api/jobs`, from the contract. */
export type CreateConfigurationInput = CreateConfigurationRequest;
export type UpdateConfigurationInput = UpdateConfigurationRequest;
export type CreateJobInput = CreateJobRequest;

export type LogStreamEvent =
  | { type: 'log'; chunk: LogEntryView }
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
  generateCliLogin(deviceCode: string): Promise<GenerateAnswer> {
    return this.json('POST', '/api/auth/cli/generate', { body: { device_code: deviceCode } });
  }
  exchangeCliLogin(input: ExchangeRequest): Promise<ExchangeAnswer> {
    return this.json('POST', '/api/auth/cli/exchange', { body: input, auth: { kind: 'none' } });
  }
  refreshTokens(refreshToken: string): Promise<TokenPairAnswer> {
    return this.json('POST', '/api/auth/cli/refresh', {
      body: { refresh_token: refreshToken },
      auth: { kind: 'none' },
    });
  }
  async logout(refreshToken: string): Promise<void> {
    await this.json('POST', '/api/auth/cli/logout', { body: { refresh_token: refreshToken }, auth: { kind: 'none' } });
  }
  whoami(): Promise<WhoAmIAnswer> {
    return this.json('GET', '/api/cli/whoami');
  }

  // ---- vineyards and configurations (SPEC §4.3)
  /** Every vineyard, newest first, each with its vines as summaries (walks all pages). */
  listVineyards(options: OwnerOptions = {}): Promise<VineyardSummaryView[]> {
    return collect(this.vineyards(options));
  }
  listVineyardsPage(page: PageOptions & OwnerOptions = {}): Promise<ListPage<VineyardSummaryView>> {
    return this.listPage('/api/cli/vineyards', 'vineyards', ownerQuery(page));
  }
  vineyards(page: PageOptions & OwnerOptions = {}): AsyncGenerator<VineyardSummaryView> {
    return this.walk('/api/cli/vineyards', 'vineyards', ownerQuery(page));
  }
  /** In the caller's own records, or with `orgId` in that organization's (admins). */
  createVineyard(name: string, options: { orgId?: string } = {}): Promise<VineyardDetailView> {
    return this.json('POST', '/api/cli/vineyards', {
      body: options.orgId === undefined ? { name } : { name, org_id: options.orgId },
    });
  }
  getVineyard(id: string): Promise<VineyardDetailView> {
    return this.json('GET', `/api/cli/vineyards/${encodeURIComponent(id)}`);
  }
  renameVineyard(id: string, name: string): Promise<VineyardDetailView> {
    return this.json('PATCH', `/api/cli/vineyards/${encodeURIComponent(id)}`, { body: { name } });
  }
  /** Only an empty vineyard (`409 vineyard_not_empty`). */
  async deleteVineyard(id: string): Promise<void> {
    await this.send('DELETE', `/api/cli/vineyards/${encodeURIComponent(id)}`, {});
  }
  /** Every vine, newest first, as summaries (walks all pages). */
  listConfigurations(options: OwnerOptions = {}): Promise<VineSummaryView[]> {
    return collect(this.configurations(options));
  }
  listConfigurationsPage(page: PageOptions & OwnerOptions = {}): Promise<ListPage<VineSummaryView>> {
    return this.listPage('/api/cli/configurations', 'configurations', ownerQuery(page));
  }
  configurations(page: PageOptions & OwnerOptions = {}): AsyncGenerator<VineSummaryView> {
    return this.walk('/api/cli/configurations', 'configurations', ownerQuery(page));
  }
  getConfiguration(nameOrId: string): Promise<VineDetailView> {
    return this.json('GET', `/api/cli/configurations/${encodeURIComponent(nameOrId)}`);
  }
  getConfigurationByProjectName(projectName: string): Promise<VineDetailView> {
    return this.json('GET', `/api/cli/configurations/by-project-name/${encodeURIComponent(projectName)}`);
  }
  createConfiguration(input: CreateConfigurationInput): Promise<VineDetailView> {
    return this.json('POST', '/api/cli/configurations', { body: input });
  }
  /** The vine and its settings (fields left out stay as they are; `variables` changes only the names given). */
  updateConfiguration(nameOrId: string, input: UpdateConfigurationInput): Promise<VineDetailView> {
    return this.json('PATCH', `/api/cli/configurations/${encodeURIComponent(nameOrId)}`, { body: input });
  }
  /** `409 vine_has_resources` unless destroyed first or `force`; `409 configuration_busy` while a job runs. */
  deleteConfiguration(nameOrId: string, options: { force?: boolean } = {}): Promise<DeletedConfigurationAnswer> {
    return this.json('DELETE', `/api/cli/configurations/${encodeURIComponent(nameOrId)}`, {
      query: options.force ? { force: 'true' } : {},
    });
  }
  /** Queues a drift check of the vine now (`202` with the job). */
  checkDrift(nameOrId: string): Promise<JobView> {
    return this.json('POST', `/api/cli/configurations/${encodeURIComponent(nameOrId)}/drift-check`);
  }
  /** The versions of a vine's state, newest first, and who holds its lock (issue 26). */
  stateHistory(nameOrId: string): Promise<StateHistoryView> {
    return this.json('GET', `/api/cli/configurations/${encodeURIComponent(nameOrId)}/state-versions`);
  }
  /** Force-unlock (admin): releases whatever lock holds the vine's state; `409 state_not_locked` when free. */
  forceUnlockState(nameOrId: string): Promise<StateUnlockView> {
    return this.json('DELETE', `/api/cli/configurations/${encodeURIComponent(nameOrId)}/state-lock`);
  }
  async downloadStateVersion(nameOrId: string, versionId: number): Promise<ReadableStream<Uint8Array>> {
    const path = `/api/cli/configurations/${encodeURIComponent(nameOrId)}/state-versions/${versionId}/state`;
    const response = await this.send('GET', path, { timeoutMs: 0 });
    if (!response.body) throw new TrellisApiError({ status: 502, code: 'empty_body', detail: 'no state body' });
    return response.body;
  }
  rollbackState(nameOrId: string, versionId: number): Promise<StateVersionView> {
    return this.json(
      'POST',
      `/api/cli/configurations/${encodeURIComponent(nameOrId)}/state-versions/${versionId}/rollback`,
    );
  }

  // ---- jobs
  createJob(input: CreateJobInput): Promise<JobView> {
    return this.json('POST', '/api/jobs', { body: input });
  }
  /** Every matching job, newest first, as summaries (walks all pages; see `jobs()` to stop early). */
  listJobs(filter: JobListFilter & OwnerOptions = {}): Promise<JobSummaryView[]> {
    return collect(this.jobs(filter));
  }
  listJobsPage(query: JobListFilter & PageOptions & OwnerOptions = {}): Promise<ListPage<JobSummaryView>> {
    return this.listPage('/api/jobs', 'jobs', ownerQuery(query));
  }
  /** Matching jobs, newest first, fetching the next page only when the caller reads that far. */
  jobs(query: JobListFilter & PageOptions & OwnerOptions = {}): AsyncGenerator<JobSummaryView> {
    return this.walk('/api/jobs', 'jobs', ownerQuery(query));
  }
  /** One job, with `waiting_for`: why it waits (null when it does not). */
  getJob(id: string): Promise<JobDetailView> {
    return this.json('GET', `/api/cli/jobs/${encodeURIComponent(id)}`);
  }
  /** Whether a git-driven job's commit status and pull request comment reached the provider. */
  async getJobVcsFeedback(id: string): Promise<VcsFeedbackView[]> {
    const list: { items: VcsFeedbackView[] } = await this.json(
      'GET',
      `/api/cli/jobs/${encodeURIComponent(id)}/vcs-feedback`,
    );
    return list.items;
  }
  getJobLogs(id: string, page: LogPageRequest = {}): Promise<LogPageView> {
    return this.json('GET', `/api/cli/jobs/${encodeURIComponent(id)}/logs`, { query: page });
  }
  cancelJob(id: string): Promise<JobView> {
    return this.json('POST', `/api/cli/jobs/${encodeURIComponent(id)}/cancel`);
  }
  /** Approves a successful plan (issue 15); the answer is the plan job with its `approval`. */
  approvePlan(id: string, input: { comment?: string } = {}): Promise<JobView> {
    return this.json('POST', `/api/cli/jobs/${encodeURIComponent(id)}/approve`, { body: input });
  }
  /** Rejects a plan: it can never be deployed. */
  rejectPlan(id: string, input: { comment: string }): Promise<JobView> {
    return this.json('POST', `/api/cli/jobs/${encodeURIComponent(id)}/reject`, { body: input });
  }
  /** Overrides a plan's failed mandatory policies (admins). */
  overridePlan(id: string, input: { reason: string }): Promise<JobView> {
    return this.json('POST', `/api/cli/jobs/${encodeURIComponent(id)}/override`, { body: input });
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
      if (event.event === 'log') yield { type: 'log', chunk: data as LogEntryView };
      else if (event.event === 'status')
        yield { type: 'status', status: data.status, error_message: data.error_message };
      else if (event.event === 'end') {
        yield { type: 'end', status: data.status };
        return;
      }
    }
  }

  // ---- workers
  /** Every worker, newest first (walks all pages). */
  listWorkers(options: OwnerOptions = {}): Promise<WorkerRecordView[]> {
    return collect(this.workers(options));
  }
  listWorkersPage(page: PageOptions & OwnerOptions = {}): Promise<ListPage<WorkerRecordView>> {
    return this.listPage('/api/cli/workers', 'workers', ownerQuery(page));
  }
  workers(page: PageOptions & OwnerOptions = {}): AsyncGenerator<WorkerRecordView> {
    return this.walk('/api/cli/workers', 'workers', ownerQuery(page));
  }
  /** `orgId` (or `org_id`) registers an agent of that organization's pool (admins). */
  registerWorker(input: RegisterWorkerRequest & { orgId?: string }): Promise<RegistrationAnswer> {
    const { orgId, ...body } = input;
    return this.json('POST', '/api/cli/workers', { body: orgId === undefined ? body : { ...body, org_id: orgId } });
  }
  getWorker(id: string): Promise<WorkerRecordView> {
    return this.json('GET', `/api/cli/workers/${encodeURIComponent(id)}`);
  }

  // ---- API tokens for automation (issue 12)
  /** The token is in this answer only; the server keeps its hash. */
  createToken(input: CreateTokenRequest): Promise<CreatedTokenAnswer> {
    return this.json('POST', '/api/tokens', { body: input });
  }
  /** Every personal token, or with `orgId` every token of that organization, newest first. */
  listTokens(filter: { orgId?: string } = {}): Promise<ApiTokenView[]> {
    return collect(this.walk<ApiTokenView>('/api/tokens', 'tokens', { org_id: filter.orgId }));
  }
  listTokensPage(filter: { orgId?: string } = {}, page: PageOptions = {}): Promise<ListPage<ApiTokenView>> {
    return this.listPage('/api/tokens', 'tokens', { org_id: filter.orgId, ...page });
  }
  async revokeToken(id: string): Promise<void> {
    await this.json('DELETE', `/api/tokens/${encodeURIComponent(id)}`);
  }

  // ---- notifications (issue 14)
  /** A webhook's signing secret is in this answer only. */
  createNotification(input: CreateNotificationRequest): Promise<CreatedNotificationAnswer> {
    return this.json('POST', '/api/notifications', { body: input });
  }
  /** Every notification the caller sees (`orgId`: one organization's, or `personal`), newest first. */
  listNotifications(filter: { orgId?: string } = {}): Promise<NotificationAnswer[]> {
    return collect(this.walk<NotificationAnswer>('/api/notifications', 'notifications', { org_id: filter.orgId }));
  }
  getNotification(id: string): Promise<NotificationAnswer> {
    return this.json('GET', `/api/notifications/${encodeURIComponent(id)}`);
  }
  async deleteNotification(id: string): Promise<void> {
    await this.json('DELETE', `/api/notifications/${encodeURIComponent(id)}`);
  }
  /** Sends a test delivery now; the answer holds its first attempt. */
  testNotification(id: string): Promise<DeliveryAnswer> {
    return this.json('POST', `/api/notifications/${encodeURIComponent(id)}/test`);
  }
  /** One page of a notification's deliveries, newest first. */
  listDeliveriesPage(id: string, page: PageOptions = {}): Promise<ListPage<DeliveryAnswer>> {
    return this.listPage(`/api/notifications/${encodeURIComponent(id)}/deliveries`, 'deliveries', page);
  }

  // ---- policies (issue 15)
  /** A module that does not compile is refused with `422 policy_invalid` and the engine's message. */
  createPolicy(input: CreatePolicyRequest): Promise<PolicyAnswer> {
    return this.json('POST', '/api/policies', { body: input });
  }
  /** Every policy the caller sees (`orgId`: one organization's, or `personal`), newest first. */
  listPolicies(filter: { orgId?: string } = {}): Promise<PolicyAnswer[]> {
    return collect(this.walk<PolicyAnswer>('/api/policies', 'policies', { org_id: filter.orgId }));
  }
  /** The policy with every version, oldest first. */
  getPolicy(id: string): Promise<PolicyDetailAnswer> {
    return this.json('GET', `/api/policies/${encodeURIComponent(id)}`);
  }
  /** A new version of the policy. */
  updatePolicy(id: string, input: UpdatePolicyRequest): Promise<PolicyAnswer> {
    return this.json('PUT', `/api/policies/${encodeURIComponent(id)}`, { body: input });
  }
  async deletePolicy(id: string): Promise<void> {
    await this.json('DELETE', `/api/policies/${encodeURIComponent(id)}`);
  }

  // ---- audit log (issue 14)
  /** A page of the caller's audit log, or with `orgId` an organization's (admins), newest first. */
  listAuditPage(query: AuditListRequest & PageOptions & OwnerOptions = {}): Promise<ListPage<AuditEntryView>> {
    return this.listPage('/api/audit', 'entries', ownerQuery(query));
  }
  /** Audit entries, newest first, fetching the next page only when the caller reads that far. */
  auditEntries(query: AuditListRequest & PageOptions & OwnerOptions = {}): AsyncGenerator<AuditEntryView> {
    return this.walk('/api/audit', 'entries', ownerQuery(query));
  }

  // ---- organizations and members (issue 12)
  createOrg(name: string): Promise<OrgView> {
    return this.json('POST', '/api/orgs', { body: { name } });
  }
  /** Every organization of the caller, with the caller's role (walks all pages). */
  listOrgs(): Promise<OrgView[]> {
    return collect(this.walk<OrgView>('/api/orgs', 'orgs', {}));
  }
  listOrgsPage(page: PageOptions = {}): Promise<ListPage<OrgView>> {
    return this.listPage('/api/orgs', 'orgs', page);
  }
  getOrg(id: string): Promise<OrgView> {
    return this.json('GET', `/api/orgs/${encodeURIComponent(id)}`);
  }
  renameOrg(id: string, name: string): Promise<OrgView> {
    return this.json('PATCH', `/api/orgs/${encodeURIComponent(id)}`, { body: { name } });
  }
  async deleteOrg(id: string): Promise<void> {
    await this.send('DELETE', `/api/orgs/${encodeURIComponent(id)}`, {});
  }
  addMember(orgId: string, input: AddMemberRequest): Promise<OrgMemberView> {
    return this.json('POST', `/api/orgs/${encodeURIComponent(orgId)}/members`, { body: input });
  }

  /** The caller's pending invitations (issue 23). */
  async listInvitations(): Promise<InvitationView[]> {
    return (await this.json<{ invitations: InvitationView[] }>('GET', '/api/invitations')).invitations;
  }

  async acceptInvitation(id: string): Promise<OrgView> {
    return this.json('POST', `/api/invitations/${encodeURIComponent(id)}/accept`);
  }

  async declineInvitation(id: string): Promise<void> {
    await this.send('POST', `/api/invitations/${encodeURIComponent(id)}/decline`, {});
  }
  /** Every member, joined and pending, oldest first (walks all pages). */
  listMembers(orgId: string): Promise<OrgMemberView[]> {
    return collect(this.walk<OrgMemberView>(`/api/orgs/${encodeURIComponent(orgId)}/members`, 'members', {}));
  }
  setMemberRole(orgId: string, memberId: string, role: OrgRoleName): Promise<OrgMemberView> {
    const path = `/api/orgs/${encodeURIComponent(orgId)}/members/${encodeURIComponent(memberId)}`;
    return this.json('PATCH', path, { body: { role } });
  }
  async removeMember(orgId: string, memberId: string): Promise<void> {
    await this.send('DELETE', `/api/orgs/${encodeURIComponent(orgId)}/members/${encodeURIComponent(memberId)}`, {});
  }

  // ---- repositories at the user's git providers (SPEC §4.3)
  async listRepositories(provider: GitProvider): Promise<RepositoryView[]> {
    const path = `/api/cli/repositories/${encodeURIComponent(provider)}`;
    return (await this.json<{ repositories: RepositoryView[] }>('GET', path)).repositories;
  }

  // ---- repository connections (issue 13)
  /** Connects a vine (id or name) to a repository; a manual connect's answer carries the webhook secret once. */
  connectRepository(configuration: string, input: ConnectVcsRequest): Promise<ConnectVcsAnswer> {
    return this.json('PUT', `/api/cli/configurations/${encodeURIComponent(configuration)}/vcs`, { body: input });
  }

  /** The vine's connection (never the secret); `vcs_not_connected` when it has none. */
  getRepositoryConnection(configuration: string): Promise<VcsConnectionAnswer> {
    return this.json('GET', `/api/cli/configurations/${encodeURIComponent(configuration)}/vcs`);
  }

  async disconnectRepository(configuration: string): Promise<void> {
    await this.json('DELETE', `/api/cli/configurations/${encodeURIComponent(configuration)}/vcs`);
  }

  // ---- the agent protocol (SPEC §4.2)
  /** Registers an agent with a user's bearer token (`POST /api/workers/register`). */
  registerAgent(input: RegisterWorkerRequest): Promise<RegistrationAnswer> {
    return this.json('POST', '/api/workers/register', { body: input });
  }
  /** The next job, or null; `wait` long-polls for up to that many seconds (max 30). */
  async claimJob(options: { wait?: number; signal?: AbortSignal } = {}): Promise<ClaimAnswer | null> {
    const wait = options.wait ?? 0;
    const response = await this.send('POST', '/api/jobs/claim', {
      query: { wait: wait > 0 ? wait : undefined },
      timeoutMs: this.timeoutMs + wait * 1000,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (response.status === 204) return null;
    return (await response.json()) as ClaimAnswer;
  }
  /** `runningJobIds`: on an agent's first heartbeat, the jobs it runs (none after a restart). */
  heartbeat(version: string, runningJobIds?: readonly string[]): Promise<HeartbeatAnswerView> {
    const body = runningJobIds === undefined ? { version } : { version, running_job_ids: runningJobIds };
    return this.json('POST', '/api/workers/heartbeat', { body });
  }
  getJobForAgent(id: string): Promise<AgentJobView> {
    return this.json('GET', `/api/jobs/${encodeURIComponent(id)}`);
  }
  reportStatus(id: string, report: StatusReport): Promise<AgentJobView> {
    return this.json('PUT', `/api/jobs/${encodeURIComponent(id)}/status`, { body: report });
  }
  appendLog(id: string, chunk: string, streamType: StreamType): Promise<LogPostAnswer> {
    return this.json('POST', `/api/jobs/${encodeURIComponent(id)}/logs`, {
      body: { log_chunk: chunk, stream_type: streamType },
    });
  }
  /** A batch of chunks with consecutive sequence numbers; repeating a batch stores it once. */
  appendLogBatch(
    id: string,
    chunks: ReadonlyArray<{ seq: number; log_chunk: string; stream_type: StreamType }>,
  ): Promise<LogBatchAnswer> {
    return this.json('POST', `/api/jobs/${encodeURIComponent(id)}/logs`, { body: { chunks } });
  }
  readLogs(id: string, page: LogPageRequest = {}): Promise<LogPageView> {
    return this.json('GET', `/api/jobs/${encodeURIComponent(id)}/logs`, { query: page });
  }
  /** Streams the plan file up; `size` lets the server refuse an oversized file before reading it. */
  uploadPlanArtifact(
    id: string,
    body: Uint8Array | ReadableStream<Uint8Array>,
    size?: number,
  ): Promise<ArtifactAnswer> {
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
  getWorkerForAgent(id: string): Promise<WorkerRecordView> {
    return this.json('GET', `/api/workers/${encodeURIComponent(id)}`);
  }
  updateWorkerMetadata(id: string, metadata: JsonObject): Promise<WorkerRecordView> {
    return this.json('POST', `/api/workers/${encodeURIComponent(id)}/metadata`, { body: metadata });
  }

  // ---- CI-only (SPEC §4.4)
  publishRelease(input: PublishReleaseRequest): Promise<ReleaseView> {
    return this.json('POST', '/api/releases/worker', { body: input });
  }
  /** Every published release, newest first (walks all pages). */
  listReleases(): Promise<ReleaseView[]> {
    return collect(this.walk('/api/releases/worker', 'releases', {}));
  }
  listReleasesPage(page: PageOptions = {}): Promise<ListPage<ReleaseView>> {
    return this.listPage('/api/releases/worker', 'releases', page);
  }
  registerTendril(input: TendrilRequest): Promise<RegistrationAnswer> {
    return this.json('POST', '/api/tendrils/register', { body: input });
  }

  // ---- plumbing
  /** One page of a list endpoint: `{ [key]: items }` and the `Link: <…>; rel="next"` header. */
  private async listPage<T>(
    path: string,
    key: string,
    query: Record<string, string | number | undefined>,
  ): Promise<ListPage<T>> {
    const response = await this.send('GET', path, { query });
    const body = (await response.json()) as Record<string, T[]>;
    return { items: body[key] ?? [], next_cursor: nextCursorOf(response.headers.get('link')) };
  }

  /** Every item of a list endpoint from `query.cursor` on, one page request at a time. */
  private async *walk<T>(
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

  private async json<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const response = await this.send(method, path, options);
    if (response.status === 204) return undefined as T;
    return (await response.json()) as T;
  }

  /**
   * Sends a request; a `401` on bearer auth triggers one refresh-and-retry. Redirects are never
   * followed (`TrellisRedirectError`): every request may carry a credential, and the API itself
   * never redirects, so a redirect is a misconfigured URL or someone else's server.
   */
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
    if (isRedirect(response.status)) {
      await response.body?.cancel();
      throw new TrellisRedirectError(this.urlOf(path, options).toString(), response.status, locationOf(response));
    }
    if (!response.ok) throw await this.problemOf(response);
    return response;
  }

  private async attempt(method: string, path: string, options: RequestOptions, auth: ClientAuth): Promise<Response> {
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

  private urlOf(path: string, options: RequestOptions): URL {
    const url = new URL(this.baseUrl + path);
    for (const [key, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return url;
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

function ownerQuery<T extends OwnerOptions & { org_id?: string }>(
  options: T,
): Record<string, string | number | undefined> {
  const { orgId, ...rest } = options;
  const query = rest as Record<string, string | number | undefined>;
  return orgId === undefined ? query : { ...query, org_id: orgId };
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}
