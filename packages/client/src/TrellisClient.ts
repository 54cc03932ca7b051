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
import { type ModuleAddress, type ModuleVersionAddress, moduleParams, moduleVersionParams } from './modulePaths.js';
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
    return this.call('generateCliLogin', { body: { device_code: deviceCode } });
  }
  exchangeCliLogin(input: ExchangeRequest): Promise<ExchangeAnswer> {
    return this.call('exchangeCliLogin', { body: input, auth: { kind: 'none' } });
  }
  refreshTokens(refreshToken: string): Promise<TokenPairAnswer> {
    return this.call('refreshCliTokens', {
      body: { refresh_token: refreshToken },
      auth: { kind: 'none' },
    });
  }
  async logout(refreshToken: string): Promise<void> {
    await this.call('logoutCli', { body: { refresh_token: refreshToken }, auth: { kind: 'none' } });
  }
  whoami(): Promise<WhoAmIAnswer> {
    return this.call('whoAmI');
  }

  // ---- vineyards and configurations (SPEC §4.3)
  /** Every vineyard, newest first, each with its vines as summaries (walks all pages). */
  listVineyards(options: OwnerOptions = {}): Promise<VineyardSummaryView[]> {
    return collect(this.vineyards(options));
  }
  listVineyardsPage(page: PageOptions & OwnerOptions = {}): Promise<ListPage<VineyardSummaryView>> {
    return this.listPage('listVineyards', 'vineyards', { query: ownerQuery(page) });
  }
  vineyards(page: PageOptions & OwnerOptions = {}): AsyncGenerator<VineyardSummaryView> {
    return this.walk('listVineyards', 'vineyards', { query: ownerQuery(page) });
  }
  /** In the caller's own records, or with `orgId` in that organization's (admins). */
  createVineyard(name: string, options: { orgId?: string } = {}): Promise<VineyardDetailView> {
    return this.call('createVineyard', {
      body: options.orgId === undefined ? { name } : { name, org_id: options.orgId },
    });
  }
  getVineyard(id: string): Promise<VineyardDetailView> {
    return this.call('getVineyard', { params: { id } });
  }
  renameVineyard(id: string, name: string): Promise<VineyardDetailView> {
    return this.call('updateVineyard', { params: { id }, body: { name } });
  }
  /** Only an empty vineyard (`409 vineyard_not_empty`). */
  async deleteVineyard(id: string): Promise<void> {
    await this.call('deleteVineyard', { params: { id } });
  }
  /** Every vine the fleet filter lists, newest first, as summaries (walks all pages). */
  listConfigurations(filter: FleetListFilter & OwnerOptions = {}): Promise<FleetVineView[]> {
    return collect(this.configurations(filter));
  }
  listConfigurationsPage(page: FleetListFilter & PageOptions & OwnerOptions = {}): Promise<ListPage<FleetVineView>> {
    return this.listPage('listConfigurations', 'configurations', { query: ownerQuery(page) });
  }
  configurations(page: FleetListFilter & PageOptions & OwnerOptions = {}): AsyncGenerator<FleetVineView> {
    return this.walk('listConfigurations', 'configurations', { query: ownerQuery(page) });
  }
  /** How many vines the fleet filter lists, by status, drift and policy (`counts=true`, a one-item page). */
  async configurationCounts(filter: FleetListFilter & OwnerOptions = {}): Promise<FleetCountsView> {
    const answer = await this.call('listConfigurations', {
      query: { ...ownerQuery(filter), counts: 'true', limit: 1 },
    });
    if (!answer.counts) throw new TrellisApiError({ status: 502, code: 'counts_missing', detail: 'no counts' });
    return answer.counts;
  }
  getConfiguration(nameOrId: string): Promise<VineDetailView> {
    return this.call('getConfiguration', { params: { name: nameOrId } });
  }
  getConfigurationByProjectName(projectName: string): Promise<VineDetailView> {
    return this.call('getConfigurationByProjectName', { params: { project_name: projectName } });
  }
  createConfiguration(input: CreateConfigurationInput): Promise<VineDetailView> {
    return this.call('createConfiguration', { body: input });
  }
  /** The vine and its settings (fields left out stay as they are; `variables` changes only the names given). */
  updateConfiguration(nameOrId: string, input: UpdateConfigurationInput): Promise<VineDetailView> {
    return this.call('updateConfiguration', { params: { name: nameOrId }, body: input });
  }
  /** `409 vine_has_resources` unless destroyed first or `force`; `409 configuration_busy` while a job runs. */
  deleteConfiguration(nameOrId: string, options: { force?: boolean } = {}): Promise<DeletedConfigurationAnswer> {
    return this.call('deleteConfiguration', {
      params: { name: nameOrId },
      query: options.force ? { force: 'true' } : {},
    });
  }
  /** Queues a drift check of the vine now (`202` with the job). */
  checkDrift(nameOrId: string): Promise<JobView> {
    return this.call('checkConfigurationDrift', { params: { name: nameOrId } });
  }
  /** The versions of a vine's state, newest first, and who holds its lock (issue 26). */
  stateHistory(nameOrId: string): Promise<StateHistoryView> {
    return this.call('listStateVersions', { params: { name: nameOrId } });
  }
  /** Force-unlock (admin): releases whatever lock holds the vine's state; `409 state_not_locked` when free. */
  forceUnlockState(nameOrId: string): Promise<StateUnlockView> {
    return this.call('forceUnlockState', { params: { name: nameOrId } });
  }
  /** Acknowledges the vine's `state_after_lost` (admin, issue 30); `409 state_after_lost_not_set` when none awaits. */
  acknowledgeStateAfterLost(nameOrId: string): Promise<StateAfterLostAcknowledgeView> {
    return this.call('acknowledgeStateAfterLost', { params: { name: nameOrId } });
  }
  async downloadStateVersion(nameOrId: string, versionId: number): Promise<ReadableStream<Uint8Array>> {
    const response = await this.request('downloadStateVersion', {
      params: { name: nameOrId, version_id: versionId },
      timeoutMs: 0,
    });
    if (!response.body) throw new TrellisApiError({ status: 502, code: 'empty_body', detail: 'no state body' });
    return response.body;
  }
  rollbackState(nameOrId: string, versionId: number): Promise<StateVersionView> {
    return this.call('rollbackStateVersion', { params: { name: nameOrId, version_id: versionId } });
  }

  // ---- jobs
  createJob(input: CreateJobInput): Promise<JobView> {
    return this.call('createJob', { body: input });
  }
  /** Every matching job, newest first, as summaries (walks all pages; see `jobs()` to stop early). */
  listJobs(filter: JobListFilter & OwnerOptions = {}): Promise<JobSummaryView[]> {
    return collect(this.jobs(filter));
  }
  listJobsPage(query: JobListFilter & PageOptions & OwnerOptions = {}): Promise<ListPage<JobSummaryView>> {
    return this.listPage('listJobs', 'jobs', { query: ownerQuery(query) });
  }
  /** Matching jobs, newest first, fetching the next page only when the caller reads that far. */
  jobs(query: JobListFilter & PageOptions & OwnerOptions = {}): AsyncGenerator<JobSummaryView> {
    return this.walk('listJobs', 'jobs', { query: ownerQuery(query) });
  }
  /** One job, with `waiting_for`: why it waits (null when it does not). */
  getJob(id: string): Promise<JobDetailView> {
    return this.call('getJob', { params: { id } });
  }
  /**
   * The queued jobs the caller may read, in the order agents claim them (`GET /api/cli/queue`):
   * `limit` from the head (default 50), with `total`; `orgId` (or `personal`) for one owner's.
   */
  getQueue(options: OwnerOptions & { limit?: number } = {}): Promise<JobQueueView> {
    return this.call('getJobQueue', { query: ownerQuery(options) });
  }
  /** Whether a git-driven job's commit status and pull request comment reached the provider. */
  async getJobVcsFeedback(id: string): Promise<VcsFeedbackView[]> {
    return (await this.call('getJobVcsFeedback', { params: { id } })).items;
  }
  /**
   * A finished PLAN's resource and output changes, attribute by attribute, sensitive values masked
   * by its agent (`404 plan_changes_not_found` when it has none).
   */
  getPlanChanges(id: string): Promise<PlanChangesAnswer> {
    return this.call('getPlanChanges', { params: { id } });
  }
  getJobLogs(id: string, page: LogPageRequest = {}): Promise<LogPageView> {
    return this.call('readJobLogs', { params: { id }, query: page });
  }
  cancelJob(id: string): Promise<JobView> {
    return this.call('cancelJob', { params: { id } });
  }
  /** Approves a successful plan (issue 15); the answer is the plan job with its `approval`. */
  approvePlan(id: string, input: { comment?: string } = {}): Promise<JobView> {
    return this.call('approvePlan', { params: { id }, body: input });
  }
  /** Rejects a plan: it can never be deployed. */
  rejectPlan(id: string, input: { comment: string }): Promise<JobView> {
    return this.call('rejectPlan', { params: { id }, body: input });
  }
  /** Overrides a plan's failed mandatory policies (admins). */
  overridePlan(id: string, input: { reason: string }): Promise<JobView> {
    return this.call('overridePlanPolicies', { params: { id }, body: input });
  }

  /**
   * Follows a job's log live (SSE). Ends after the `end` event; pass `after` (or resume with the
   * last chunk id) to continue where an earlier stream stopped.
   */
  async *streamJobLogs(
    id: string,
    options: { after?: number; signal?: AbortSignal } = {},
  ): AsyncGenerator<LogStreamEvent> {
    const response = await this.request('streamJobLogs', {
      params: { id },
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
    return this.listPage('listWorkers', 'workers', { query: ownerQuery(page) });
  }
  workers(page: PageOptions & OwnerOptions = {}): AsyncGenerator<WorkerRecordView> {
    return this.walk('listWorkers', 'workers', { query: ownerQuery(page) });
  }
  /** `orgId` (or `org_id`) registers an agent of that organization's pool (admins). */
  registerWorker(input: RegisterWorkerRequest & { orgId?: string }): Promise<RegistrationAnswer> {
    const { orgId, ...body } = input;
    return this.call('registerSelfHostedWorker', { body: orgId === undefined ? body : { ...body, org_id: orgId } });
  }
  getWorker(id: string): Promise<WorkerRecordView> {
    return this.call('getWorker', { params: { id } });
  }

  // ---- API tokens for automation (issue 12)
  /** The token is in this answer only; the server keeps its hash. */
  createToken(input: CreateTokenRequest): Promise<CreatedTokenAnswer> {
    return this.call('createToken', { body: input });
  }
  /** Every personal token, or with `orgId` every token of that organization, newest first. */
  listTokens(filter: { orgId?: string } = {}): Promise<ApiTokenView[]> {
    return collect(this.walk('listTokens', 'tokens', { query: { org_id: filter.orgId } }));
  }
  listTokensPage(filter: { orgId?: string } = {}, page: PageOptions = {}): Promise<ListPage<ApiTokenView>> {
    return this.listPage('listTokens', 'tokens', { query: { org_id: filter.orgId, ...page } });
  }
  async revokeToken(id: string): Promise<void> {
    await this.call('revokeToken', { params: { id } });
  }

  // ---- notifications (issue 14)
  /** A webhook's signing secret is in this answer only. */
  createNotification(input: CreateNotificationRequest): Promise<CreatedNotificationAnswer> {
    return this.call('createNotification', { body: input });
  }
  /** Every notification the caller sees (`orgId`: one organization's, or `personal`), newest first. */
  listNotifications(filter: { orgId?: string } = {}): Promise<NotificationAnswer[]> {
    return collect(this.walk('listNotifications', 'notifications', { query: { org_id: filter.orgId } }));
  }
  getNotification(id: string): Promise<NotificationAnswer> {
    return this.call('getNotification', { params: { id } });
  }
  async deleteNotification(id: string): Promise<void> {
    await this.call('deleteNotification', { params: { id } });
  }
  /** Sends a test delivery now; the answer holds its first attempt. */
  testNotification(id: string): Promise<DeliveryAnswer> {
    return this.call('testNotification', { params: { id } });
  }
  /** One page of a notification's deliveries, newest first. */
  listDeliveriesPage(id: string, page: PageOptions = {}): Promise<ListPage<DeliveryAnswer>> {
    return this.listPage('listNotificationDeliveries', 'deliveries', { params: { id }, query: page });
  }

  // ---- policies (issue 15)
  /** A module that does not compile is refused with `422 policy_invalid` and the engine's message. */
  createPolicy(input: CreatePolicyRequest): Promise<PolicyAnswer> {
    return this.call('createPolicy', { body: input });
  }
  /** Every policy the caller sees (`orgId`: one organization's, or `personal`), newest first. */
  listPolicies(filter: { orgId?: string } = {}): Promise<PolicyAnswer[]> {
    return collect(this.walk('listPolicies', 'policies', { query: { org_id: filter.orgId } }));
  }
  /** The policy with every version, oldest first. */
  getPolicy(id: string): Promise<PolicyDetailAnswer> {
    return this.call('getPolicy', { params: { id } });
  }
  /** A new version of the policy. */
  updatePolicy(id: string, input: UpdatePolicyRequest): Promise<PolicyAnswer> {
    return this.call('updatePolicy', { params: { id }, body: input });
  }
  async deletePolicy(id: string): Promise<void> {
    await this.call('deletePolicy', { params: { id } });
  }

  // ---- audit log (issue 14)
  /** A page of the caller's audit log, or with `orgId` an organization's (admins), newest first. */
  listAuditPage(query: AuditListRequest & PageOptions & OwnerOptions = {}): Promise<ListPage<AuditEntryView>> {
    return this.listPage('listAudit', 'entries', { query: ownerQuery(query) });
  }
  /** Audit entries, newest first, fetching the next page only when the caller reads that far. */
  auditEntries(query: AuditListRequest & PageOptions & OwnerOptions = {}): AsyncGenerator<AuditEntryView> {
    return this.walk('listAudit', 'entries', { query: ownerQuery(query) });
  }

  // ---- organizations and members (issue 12)
  createOrg(name: string): Promise<OrgView> {
    return this.call('createOrg', { body: { name } });
  }
  /** Every organization of the caller, with the caller's role (walks all pages). */
  listOrgs(): Promise<OrgView[]> {
    return collect(this.walk('listOrgs', 'orgs', {}));
  }
  listOrgsPage(page: PageOptions = {}): Promise<ListPage<OrgView>> {
    return this.listPage('listOrgs', 'orgs', { query: page });
  }
  getOrg(id: string): Promise<OrgView> {
    return this.call('getOrg', { params: { id } });
  }
  renameOrg(id: string, name: string): Promise<OrgView> {
    return this.call('renameOrg', { params: { id }, body: { name } });
  }
  async deleteOrg(id: string): Promise<void> {
    await this.call('deleteOrg', { params: { id } });
  }
  addMember(orgId: string, input: AddMemberRequest): Promise<OrgMemberView> {
    return this.call('addMember', { params: { id: orgId }, body: input });
  }

  /** The caller's pending invitations (issue 23). */
  async listInvitations(): Promise<InvitationView[]> {
    return (await this.call('listInvitations')).invitations;
  }

  async acceptInvitation(id: string): Promise<OrgView> {
    return this.call('acceptInvitation', { params: { id } });
  }

  async declineInvitation(id: string): Promise<void> {
    await this.call('declineInvitation', { params: { id } });
  }
  /** Every member, joined and pending, oldest first (walks all pages). */
  listMembers(orgId: string): Promise<OrgMemberView[]> {
    return collect(this.walk('listMembers', 'members', { params: { id: orgId } }));
  }
  setMemberRole(orgId: string, memberId: string, role: OrgRoleName): Promise<OrgMemberView> {
    return this.call('setMemberRole', { params: { id: orgId, member_id: memberId }, body: { role } });
  }
  async removeMember(orgId: string, memberId: string): Promise<void> {
    await this.call('removeMember', { params: { id: orgId, member_id: memberId } });
  }

  // ---- repositories at the user's git providers (SPEC §4.3)
  async listRepositories(provider: GitProvider): Promise<RepositoryView[]> {
    return (await this.call('listRepositories', { params: { provider } })).repositories;
  }

  // ---- repository connections (issue 13)
  /** Connects a vine (id or name) to a repository; a manual connect's answer carries the webhook secret once. */
  connectRepository(configuration: string, input: ConnectVcsRequest): Promise<ConnectVcsAnswer> {
    return this.call('connectConfigurationRepository', { params: { name: configuration }, body: input });
  }

  /** The vine's connection (never the secret); `vcs_not_connected` when it has none. */
  getRepositoryConnection(configuration: string): Promise<VcsConnectionAnswer> {
    return this.call('getConfigurationRepository', { params: { name: configuration } });
  }

  async disconnectRepository(configuration: string): Promise<void> {
    await this.call('disconnectConfigurationRepository', { params: { name: configuration } });
  }

  // ---- the provider mirror (issue 28)
  /** Streams one zip into `namespace`'s mirror; `created` false: the same bytes were there already. */
  async pushMirrorArchive(
    namespace: string,
    archive: { hostname: string; namespace: string; type: string; version: string; platform: string },
    body: ReadableStream<Uint8Array>,
    size: number,
  ): Promise<{ archive: MirrorArchiveView; created: boolean }> {
    const { namespace: providerNamespace, ...address } = archive;
    const headers = { 'Content-Type': 'application/zip', 'Content-Length': String(size) };
    const response = await this.request('pushMirrorArchive', {
      params: { namespace, provider_namespace: providerNamespace, ...address },
      rawBody: body,
      headers,
      timeoutMs: 0,
    });
    return { archive: (await response.json()) as MirrorArchiveView, created: response.status === 201 };
  }
  listMirrorArchives(namespace: string): Promise<MirrorArchiveView[]> {
    return collect(this.walk('listMirrorArchives', 'archives', { params: { namespace } }));
  }

  // ---- the module registry (issue 28)
  /** Publishes a module version from its `.tar.gz` (bytes or a stream, sent as `application/gzip`). */
  publishModule(
    address: ModuleVersionAddress,
    tarball: Uint8Array | ReadableStream<Uint8Array>,
    size?: number,
  ): Promise<RegistryModuleVersionAnswer> {
    return this.call('publishModuleVersion', {
      params: moduleVersionParams(address),
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
    return this.listPage('listModules', 'modules', { query: { namespace, limit: page.limit, cursor: page.cursor } });
  }
  moduleVersions(address: ModuleAddress): Promise<RegistryModuleVersionsAnswer> {
    return this.call('listModuleVersions', { params: moduleParams(address) });
  }
  /** The vines whose last plan or deploy installed the module, with the version. */
  moduleUsage(address: ModuleAddress): Promise<ModuleUsageAnswer> {
    return this.call('getModuleUsage', { params: moduleParams(address) });
  }
  deprecateModuleVersion(
    address: ModuleVersionAddress,
    input: DeprecateModuleVersionRequest = {},
  ): Promise<RegistryModuleVersionAnswer> {
    return this.call('deprecateModuleVersion', { params: moduleVersionParams(address), body: input });
  }
  /** Connects a module to a git repository whose version tags publish it (an admin of the namespace). */
  connectModuleRepository(
    address: ModuleAddress,
    input: ConnectModuleRepositoryRequest,
  ): Promise<ModuleRepositoryAnswer> {
    return this.call('connectModuleRepository', { params: moduleParams(address), body: input });
  }
  moduleRepository(address: ModuleAddress): Promise<ModuleRepositoryAnswer> {
    return this.call('getModuleRepository', { params: moduleParams(address) });
  }
  async disconnectModuleRepository(address: ModuleAddress): Promise<void> {
    await this.call('disconnectModuleRepository', { params: moduleParams(address) });
  }
  /** Deletes one version, or with no `version` the whole module. */
  async deleteModule(address: ModuleAddress & { version?: string }): Promise<void> {
    if (address.version === undefined) await this.call('deleteModule', { params: moduleParams(address) });
    else
      await this.call('deleteModuleVersion', { params: moduleVersionParams({ ...address, version: address.version }) });
  }

  // ---- the private registry's providers and GPG keys (issue 28)
  listRegistryProviders(
    namespace: string,
    page: { limit?: number; after?: string } = {},
  ): Promise<RegistryProviderPage> {
    return this.call('listRegistryProviders', { params: { namespace }, query: page });
  }
  async providerVersions(namespace: string, type: string): Promise<ProviderVersionView[]> {
    return (await this.call('listRegistryProviderVersions', { params: { namespace, type } })).versions;
  }
  /** Publishes a version's SHA256SUMS and signature; its zips follow, one `uploadProviderPlatform` each. */
  publishProviderVersion(
    namespace: string,
    type: string,
    version: string,
    input: PublishProviderVersionRequest,
  ): Promise<ProviderVersionView> {
    return this.call('publishRegistryProviderVersion', { params: { namespace, type, version }, body: input });
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
    return this.call('uploadRegistryProviderPlatform', {
      params: { namespace, type, version, os: platform.os, arch: platform.arch },
      rawBody: zip,
      timeoutMs: 0,
      headers: { 'Content-Type': 'application/zip', 'Content-Length': String(size) },
    });
  }
  async deleteProviderVersion(namespace: string, type: string, version: string): Promise<void> {
    await this.call('deleteRegistryProviderVersion', { params: { namespace, type, version } });
  }
  async listGpgKeys(namespace: string): Promise<GpgKeyView[]> {
    return (await this.call('listRegistryGpgKeys', { params: { namespace } })).keys;
  }
  addGpgKey(namespace: string, asciiArmor: string): Promise<GpgKeyView> {
    return this.call('addRegistryGpgKey', {
      params: { namespace },
      body: { ascii_armor: asciiArmor },
    });
  }
  async deleteGpgKey(namespace: string, keyId: string): Promise<void> {
    await this.call('deleteRegistryGpgKey', { params: { namespace, key_id: keyId } });
  }
}
