/**
 * The TypeScript types of the contract, inferred from the schemas (`z.output` of what the server
 * answers, `z.input` of what a caller sends), so a client needs no zod to use them.
 */
import type { z } from 'zod';
import type { PlanChangesResponse, PlanChangesSchema } from './planChanges.js';
import type {
  DeprecateModuleVersionBody,
  ModuleUsageRecord,
  RegistryModuleRecord,
  RegistryModuleVersionRecord,
  RegistryModuleVersions,
} from './registryModules.js';
import type {
  GpgKeyRecord,
  ProviderVersionRecord,
  PublishProviderVersionBody,
  RegistryProviderList,
} from './registryProviders.js';
import type {
  AgentJob,
  ArtifactResponse,
  ClaimResponse,
  HeartbeatResponse,
  LogBatchResponse,
  LogPostResponse,
  StatusBody,
  StatusResponse,
} from './agent.js';
import type {
  ExchangeBody,
  ExchangeResponse,
  GenerateResponse,
  Repository,
  TokenPairResponse,
  WhoAmIResponse,
} from './auth.js';
import type {
  CreateConfigurationBody,
  CreateJobBody,
  ListConfigurationsQuery,
  ListJobsQuery,
  LogQuery,
  RegisterWorkerBody,
  SourceInput,
} from './cli.js';
import type {
  Job,
  JobSummary,
  LogEntry,
  LogPage,
  RegistrationResponse,
  Release,
  VineDetail,
  VineSummary,
  FleetVineSummary,
  FleetCounts,
  Vineyard,
  VineyardSummary,
  Worker,
} from './records.js';
import type { AddMemberBody, Invitation, Org, OrgMember, OrgRoleSchema } from './orgs.js';
import type { PublishReleaseBody, TendrilBody } from './releases.js';
import type { AuditEntry, ListAuditQuery } from './audit.js';
import type { ApiTokenRecord, CreatedToken, CreateTokenBody } from './tokens.js';
import type {
  CreatedNotificationRecord,
  CreateNotificationBody,
  DeliveryRecord,
  NotificationRecord,
} from './notifications.js';
import type { ConnectVcsBody, ConnectVcsResponse, VcsConnectionRecord } from './vcs.js';
import type { ConnectModuleRepositoryBody, ModuleRepositoryRecord } from './moduleRepositories.js';
import type {
  CreatePolicyBody,
  PolicyDetailRecord,
  PolicyRecord,
  PolicyResultRecord,
  UpdatePolicyBody,
} from './policies.js';

// ---- answers
export type GenerateAnswer = z.output<typeof GenerateResponse>;
export type ExchangeAnswer = z.output<typeof ExchangeResponse>;
export type TokenPairAnswer = z.output<typeof TokenPairResponse>;
export type WhoAmIAnswer = z.output<typeof WhoAmIResponse>;
export type RepositoryView = z.output<typeof Repository>;
export type VineyardSummaryView = z.output<typeof VineyardSummary>;
export type VineyardDetailView = z.output<typeof Vineyard>;
export type VineSummaryView = z.output<typeof VineSummary>;
export type FleetVineView = z.output<typeof FleetVineSummary>;
export type FleetCountsView = z.output<typeof FleetCounts>;
export type FleetListRequest = Omit<z.input<typeof ListConfigurationsQuery>, 'limit' | 'cursor' | 'counts'>;
export type VineDetailView = z.output<typeof VineDetail>;
export type JobView = z.output<typeof Job>;
export type JobDetailView = z.output<typeof import('./records.js').JobDetail>;
export type WaitingForView = z.output<typeof import('./records.js').WaitingFor>;
export type JobQueueView = z.output<typeof import('./queue.js').JobQueue>;
export type QueueEntryView = z.output<typeof import('./queue.js').QueueEntry>;
export type AgentJobView = z.output<typeof AgentJob>;
export type JobSummaryView = z.output<typeof JobSummary>;
export type LogEntryView = z.output<typeof LogEntry>;
export type LogPageView = z.output<typeof LogPage>;
export type WorkerRecordView = z.output<typeof Worker>;
export type RegistrationAnswer = z.output<typeof RegistrationResponse>;
export type ReleaseView = z.output<typeof Release>;
export type ClaimAnswer = z.output<typeof ClaimResponse>;
export type StatusAnswer = z.output<typeof StatusResponse>;
export type HeartbeatAnswerView = z.output<typeof HeartbeatResponse>;
export type LogPostAnswer = z.output<typeof LogPostResponse>;
export type LogBatchAnswer = z.output<typeof LogBatchResponse>;
export type ArtifactAnswer = z.output<typeof ArtifactResponse>;
/** A plan's change document as the agent uploads it, and as people read it (issue 29). */
export type PlanChangesUpload = z.input<typeof PlanChangesSchema>;
export type PlanChangesAnswer = z.output<typeof PlanChangesResponse>;
export type ApiTokenView = z.output<typeof ApiTokenRecord>;
export type CreatedTokenAnswer = z.output<typeof CreatedToken>;
export type NotificationAnswer = z.output<typeof NotificationRecord>;
export type CreatedNotificationAnswer = z.output<typeof CreatedNotificationRecord>;
export type DeliveryAnswer = z.output<typeof DeliveryRecord>;
export type PolicyAnswer = z.output<typeof PolicyRecord>;
export type VcsConnectionAnswer = z.output<typeof VcsConnectionRecord>;
export type ConnectVcsAnswer = z.output<typeof ConnectVcsResponse>;
export type PolicyDetailAnswer = z.output<typeof PolicyDetailRecord>;
export type PolicyResultView = z.output<typeof PolicyResultRecord>;
export type RegistryModuleAnswer = z.output<typeof RegistryModuleRecord>;
export type RegistryModuleVersionAnswer = z.output<typeof RegistryModuleVersionRecord>;
export type RegistryModuleVersionsAnswer = z.output<typeof RegistryModuleVersions>;
export type ModuleUsageAnswer = z.output<typeof ModuleUsageRecord>;
export type DeprecateModuleVersionRequest = z.input<typeof DeprecateModuleVersionBody>;
export type ModuleRepositoryAnswer = z.output<typeof ModuleRepositoryRecord>;
export type ConnectModuleRepositoryRequest = z.input<typeof ConnectModuleRepositoryBody>;

export type AuditEntryView = z.output<typeof AuditEntry>;
export type AuditListRequest = Omit<z.input<typeof ListAuditQuery>, 'limit' | 'cursor'>;

export type OrgView = z.output<typeof Org>;
export type OrgMemberView = z.output<typeof OrgMember>;
export type OrgRoleName = z.output<typeof OrgRoleSchema>;
export type InvitationView = z.output<typeof Invitation>;

// ---- requests
export type CreateNotificationRequest = z.input<typeof CreateNotificationBody>;
export type CreatePolicyRequest = z.input<typeof CreatePolicyBody>;
export type ConnectVcsRequest = z.input<typeof ConnectVcsBody>;
export type UpdatePolicyRequest = z.input<typeof UpdatePolicyBody>;
export type AddMemberRequest = z.input<typeof AddMemberBody>;
export type ExchangeRequest = z.input<typeof ExchangeBody>;
/** The body is checked loosely (core judges the source); a caller sends a source as answered. */
export type CreateConfigurationRequest = Omit<z.input<typeof CreateConfigurationBody>, 'source'> & {
  source: z.input<typeof SourceInput>;
};
export type CreateJobRequest = z.input<typeof CreateJobBody>;
/** The settings and (issue 25) the vine itself; the source is sent as answered. */
export type UpdateConfigurationRequest = Omit<
  z.input<typeof import('./vineEdits.js').EditConfigurationBody>,
  'source'
> & {
  source?: z.input<typeof SourceInput>;
};
export type DeletedConfigurationAnswer = z.output<typeof import('./vineEdits.js').DeletedConfiguration>;
export type JobListRequest = Omit<z.input<typeof ListJobsQuery>, 'limit' | 'cursor'>;
export type LogPageRequest = z.output<typeof LogQuery>;
export type RegisterWorkerRequest = z.input<typeof RegisterWorkerBody>;
export type StatusReport = z.input<typeof StatusBody>;
export type PublishReleaseRequest = z.input<typeof PublishReleaseBody>;
export type TendrilRequest = z.input<typeof TendrilBody>;
export type CreateTokenRequest = z.input<typeof CreateTokenBody>;

/** The state history of a vine (issue 26). */
export type StateHistoryView = z.output<typeof import('./tfeState.js').StateHistoryAnswer>;
export type StateVersionView = z.output<typeof import('./tfeState.js').StateVersionRecord>;
export type StateUnlockView = z.output<typeof import('./tfeState.js').StateUnlockAnswer>;
export type StateAfterLostAcknowledgeView = z.output<typeof import('./tfeState.js').StateAfterLostAcknowledgeAnswer>;
export type MirrorArchiveView = z.output<typeof import('./registryMirror.js').MirrorArchiveRecord>;

// ---- the private registry's providers (issue 28)
export type PublishProviderVersionRequest = z.input<typeof PublishProviderVersionBody>;
export type ProviderVersionView = z.output<typeof ProviderVersionRecord>;
export type RegistryProviderPage = z.output<typeof RegistryProviderList>;
export type GpgKeyView = z.output<typeof GpgKeyRecord>;
