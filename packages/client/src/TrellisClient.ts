import type {
  ApiTokenView,
  AuditEntryView,
  AuditListRequest,
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
  JobListRequest,
  JobSummaryView,
  JobDetailView,
  JobQueueView,
  JobView,
  LogEntryView,
  LogPageRequest,
  LogPageView,
  RegisterWorkerRequest,
  RegistrationAnswer,
  RepositoryView,
  ConnectVcsAnswer,
  ConnectVcsRequest,
  VcsConnectionAnswer,
  TokenPairAnswer,
  UpdateConfigurationRequest,
  VineDetailView,
  FleetVineView,
  FleetCountsView,
  FleetListRequest,
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
  StateAfterLostAcknowledgeView,
  StateVersionView,
  MirrorArchiveView,
  GpgKeyView,
  ProviderVersionView,
  PublishProviderVersionRequest,
  RegistryProviderPage,
  DeprecateModuleVersionRequest,
  RegistryModuleAnswer,
  RegistryModuleVersionAnswer,
  RegistryModuleVersionsAnswer,
  ModuleUsageAnswer,
  ConnectModuleRepositoryRequest,
  ModuleRepositoryAnswer,
  PlanChangesAnswer,
} from '@trellis/contract';
import type { GitProvider, JobStatus, VcsFeedbackView } from '@trellis/core';
import { TrellisApiError } from './errors.js';
import { readServerSentEvents } from './sse.js';
import { AgentProtocolClient } from './AgentProtocolClient.js';
import { type ModuleAddress, type ModuleVersionAddress, modulePath, moduleRepositoryPath } from './modulePaths.js';
import { collect, type ListPage, type OwnerOptions, ownerQuery, type PageOptions } from './HttpTransport.js';

export type { ModuleAddress, ModuleVersionAddress } from './modulePaths.js';
export {
  type ClientAuth,
  type ClientOptions,
  type ListPage,
  nextCursorOf,
  type OwnerOptions,
  type PageOptions,
} from './HttpTransport.js';

/** Filters of `GET /api/cli/configurations`, the fleet (the contract's query without the page). */
export type FleetListFilter = FleetListRequest;

/** Filters of `GET /api/jobs` (the contract's query without the page). */
export type JobListFilter = JobListRequest;

/** The bodies of `POST /api/cli/configurations` and `POST /api/jobs`, from the contract. */
export type CreateConfigurationInput = CreateConfigurationRequest;
export type UpdateConfigurationInput = UpdateConfigurationRequest;
export type CreateJobInput = CreateJobRequest;

export type LogStreamEvent =
  | { type: 'log'; chunk: LogEntryView }
  | { type: 'status'; status: JobStatus; error_message: string | null }
  | { type: 'end'; status: JobStatus };

/** A typed client of every endpoint of the Trellis API; errors become `TrellisApiError`. */
export class TrellisClient extends AgentProtocolClient {
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
  /** Every vine the fleet filter lists, newest first, as summaries (walks all pages). */
  listConfigurations(filter: FleetListFilter & OwnerOptions = {}): Promise<FleetVineView[]> {
    return collect(this.configurations(filter));
  }
  listConfigurationsPage(page: FleetListFilter & PageOptions & OwnerOptions = {}): Promise<ListPage<FleetVineView>> {
    return this.listPage('/api/cli/configurations', 'configurations', ownerQuery(page));
  }
  configurations(page: FleetListFilter & PageOptions & OwnerOptions = {}): AsyncGenerator<FleetVineView> {
    return this.walk('/api/cli/configurations', 'configurations', ownerQuery(page));
  }
  /** How many vines the fleet filter lists, by status, drift and policy (`counts=true`, a one-item page). */
  async configurationCounts(filter: FleetListFilter & OwnerOptions = {}): Promise<FleetCountsView> {
    const answer = await this.json<{ counts: FleetCountsView }>('GET', '/api/cli/configurations', {
      query: { ...ownerQuery(filter), counts: 'true', limit: 1 },
    });
    return answer.counts;
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
  /** Acknowledges the vine's `state_after_lost` (admin, issue 30); `409 state_after_lost_not_set` when none awaits. */
  acknowledgeStateAfterLost(nameOrId: string): Promise<StateAfterLostAcknowledgeView> {
    return this.json('DELETE', `/api/cli/configurations/${encodeURIComponent(nameOrId)}/state-after-lost`);
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
  /**
   * The queued jobs the caller may read, in the order agents claim them (`GET /api/cli/queue`):
   * `limit` from the head (default 50), with `total`; `orgId` (or `personal`) for one owner's.
   */
  getQueue(options: OwnerOptions & { limit?: number } = {}): Promise<JobQueueView> {
    return this.json('GET', '/api/cli/queue', { query: ownerQuery(options) });
  }
  /** Whether a git-driven job's commit status and pull request comment reached the provider. */
  async getJobVcsFeedback(id: string): Promise<VcsFeedbackView[]> {
    const list: { items: VcsFeedbackView[] } = await this.json(
      'GET',
      `/api/cli/jobs/${encodeURIComponent(id)}/vcs-feedback`,
    );
    return list.items;
  }
  /**
   * A finished PLAN's resource and output changes, attribute by attribute, sensitive values masked
   * by its agent (`404 plan_changes_not_found` when it has none).
   */
  getPlanChanges(id: string): Promise<PlanChangesAnswer> {
    return this.json('GET', `/api/cli/jobs/${encodeURIComponent(id)}/plan/changes`);
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

  // ---- the provider mirror (issue 28)
  /** Streams one zip into `namespace`'s mirror; `created` false: the same bytes were there already. */
  async pushMirrorArchive(
    namespace: string,
    archive: { hostname: string; namespace: string; type: string; version: string; platform: string },
    body: ReadableStream<Uint8Array>,
    size: number,
  ): Promise<{ archive: MirrorArchiveView; created: boolean }> {
    const parts = [namespace, archive.hostname, archive.namespace, archive.type, archive.version, archive.platform];
    const path = `/api/registry/mirror-archives/${parts.map(encodeURIComponent).join('/')}`;
    const headers = { 'Content-Type': 'application/zip', 'Content-Length': String(size) };
    const response = await this.send('PUT', path, { rawBody: body, headers, timeoutMs: 0 });
    return { archive: (await response.json()) as MirrorArchiveView, created: response.status === 201 };
  }
  listMirrorArchives(namespace: string): Promise<MirrorArchiveView[]> {
    return collect(
      this.walk<MirrorArchiveView>(`/api/registry/mirror-archives/${encodeURIComponent(namespace)}`, 'archives', {}),
    );
  }

  // ---- the module registry (issue 28)
  /** Publishes a module version from its `.tar.gz` (bytes or a stream, sent as `application/gzip`). */
  publishModule(
    address: ModuleVersionAddress,
    tarball: Uint8Array | ReadableStream<Uint8Array>,
    size?: number,
  ): Promise<RegistryModuleVersionAnswer> {
    return this.json('POST', modulePath(address, address.version), {
      rawBody: tarball as NonNullable<RequestInit['body']>,
      headers: {
        'Content-Type': 'application/gzip',
        ...(size !== undefined ? { 'Content-Length': String(size) } : {}),
      },
      timeoutMs: 0,
    });
  }
  /** A page of a namespace's modules, newest first. */
  listModulesPage(namespace: string, page: PageOptions = {}): Promise<ListPage<RegistryModuleAnswer>> {
    return this.listPage('/api/registry/modules', 'modules', { namespace, limit: page.limit, cursor: page.cursor });
  }
  moduleVersions(address: ModuleAddress): Promise<RegistryModuleVersionsAnswer> {
    return this.json('GET', `${modulePath(address)}/versions`);
  }
  /** The vines whose last plan or deploy installed the module, with the version. */
  moduleUsage(address: ModuleAddress): Promise<ModuleUsageAnswer> {
    return this.json('GET', `${modulePath(address)}/usage`);
  }
  deprecateModuleVersion(
    address: ModuleVersionAddress,
    input: DeprecateModuleVersionRequest = {},
  ): Promise<RegistryModuleVersionAnswer> {
    return this.json('POST', `${modulePath(address, address.version)}/deprecate`, { body: input });
  }
  /** Connects a module to a git repository whose version tags publish it (an admin of the namespace). */
  connectModuleRepository(
    address: ModuleAddress,
    input: ConnectModuleRepositoryRequest,
  ): Promise<ModuleRepositoryAnswer> {
    return this.json('PUT', moduleRepositoryPath(address), { body: input });
  }
  moduleRepository(address: ModuleAddress): Promise<ModuleRepositoryAnswer> {
    return this.json('GET', moduleRepositoryPath(address));
  }
  async disconnectModuleRepository(address: ModuleAddress): Promise<void> {
    await this.json('DELETE', moduleRepositoryPath(address));
  }
  /** Deletes one version, or with no `version` the whole module. */
  async deleteModule(address: ModuleAddress & { version?: string }): Promise<void> {
    await this.json('DELETE', modulePath(address, address.version));
  }

  // ---- the private registry's providers and GPG keys (issue 28)
  listRegistryProviders(
    namespace: string,
    page: { limit?: number; after?: string } = {},
  ): Promise<RegistryProviderPage> {
    return this.json('GET', `/api/registry/providers/${encodeURIComponent(namespace)}`, { query: page });
  }
  async providerVersions(namespace: string, type: string): Promise<ProviderVersionView[]> {
    const path = `/api/registry/providers/${encodeURIComponent(namespace)}/${encodeURIComponent(type)}/versions`;
    return (await this.json<{ versions: ProviderVersionView[] }>('GET', path)).versions;
  }
  /** Publishes a version's SHA256SUMS and signature; its zips follow, one `uploadProviderPlatform` each. */
  publishProviderVersion(
    namespace: string,
    type: string,
    version: string,
    input: PublishProviderVersionRequest,
  ): Promise<ProviderVersionView> {
    return this.json('POST', providerVersionPath(namespace, type, version), { body: input });
  }
  /** Streams one platform's zip (`size` bytes): never held in memory, never retried. */
  uploadProviderPlatform(
    namespace: string,
    type: string,
    version: string,
    platform: { os: string; arch: string },
    zip: ReadableStream<Uint8Array>,
    size: number,
  ): Promise<ProviderVersionView> {
    const path = `${providerVersionPath(namespace, type, version)}/platforms/${encodeURIComponent(platform.os)}/${encodeURIComponent(platform.arch)}`;
    return this.json('PUT', path, {
      rawBody: zip,
      timeoutMs: 0,
      headers: { 'Content-Type': 'application/zip', 'Content-Length': String(size) },
    });
  }
  async deleteProviderVersion(namespace: string, type: string, version: string): Promise<void> {
    await this.json('DELETE', providerVersionPath(namespace, type, version));
  }
  async listGpgKeys(namespace: string): Promise<GpgKeyView[]> {
    return (await this.json<{ keys: GpgKeyView[] }>('GET', `/api/registry/gpg-keys/${encodeURIComponent(namespace)}`))
      .keys;
  }
  addGpgKey(namespace: string, asciiArmor: string): Promise<GpgKeyView> {
    return this.json('POST', `/api/registry/gpg-keys/${encodeURIComponent(namespace)}`, {
      body: { ascii_armor: asciiArmor },
    });
  }
  async deleteGpgKey(namespace: string, keyId: string): Promise<void> {
    await this.json('DELETE', `/api/registry/gpg-keys/${encodeURIComponent(namespace)}/${encodeURIComponent(keyId)}`);
  }
}

function providerVersionPath(namespace: string, type: string, version: string): string {
  return `/api/registry/providers/${encodeURIComponent(namespace)}/${encodeURIComponent(type)}/versions/${encodeURIComponent(version)}`;
}
