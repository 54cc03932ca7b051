import { AuditCommand } from './AuditCommand.js';
import { ConnectConfigCommand } from './configs/ConnectConfigCommand.js';
import { CreateConfigCommand } from './configs/CreateConfigCommand.js';
import { DeleteConfigCommand } from './configs/DeleteConfigCommand.js';
import { UpdateConfigCommand } from './configs/UpdateConfigCommand.js';
import { DisconnectConfigCommand } from './configs/DisconnectConfigCommand.js';
import { DriftCheckCommand } from './configs/DriftCheckCommand.js';
import { SetConfigCommand } from './configs/SetConfigCommand.js';
import { ListConfigsCommand } from './configs/ListConfigsCommand.js';
import { ShowConfigCommand } from './configs/ShowConfigCommand.js';
import { ListStateCommand, PullStateCommand, RollbackStateCommand } from './configs/StateCommands.js';
import { UnlockStateCommand } from './configs/UnlockStateCommand.js';
import { AcknowledgeStateCommand } from './configs/AcknowledgeStateCommand.js';
import { HelpCommand } from './HelpCommand.js';
import { ApprovePlanCommand } from './plans/ApprovePlanCommand.js';
import { OverridePlanCommand } from './plans/OverridePlanCommand.js';
import { RejectPlanCommand } from './plans/RejectPlanCommand.js';
import { CancelJobCommand } from './jobs/CancelJobCommand.js';
import { DeployCommand } from './jobs/DeployCommand.js';
import { DestroyCommand } from './jobs/DestroyCommand.js';
import { JobLogsCommand } from './jobs/JobLogsCommand.js';
import { ListJobsCommand } from './jobs/ListJobsCommand.js';
import { QueueCommand } from './jobs/QueueCommand.js';
import { PlanCommand } from './jobs/PlanCommand.js';
import { ShowJobCommand } from './jobs/ShowJobCommand.js';
import { PlanChangesCommand } from './jobs/PlanChangesCommand.js';
import { WaitJobCommand } from './jobs/WaitJobCommand.js';
import { LoginCommand } from './LoginCommand.js';
import { LogoutCommand } from './LogoutCommand.js';
import { AcceptInvitationCommand } from './orgs/AcceptInvitationCommand.js';
import { AddMemberCommand } from './orgs/AddMemberCommand.js';
import { CreateOrgCommand } from './orgs/CreateOrgCommand.js';
import { DeclineInvitationCommand } from './orgs/DeclineInvitationCommand.js';
import { DeleteOrgCommand } from './orgs/DeleteOrgCommand.js';
import { ListInvitationsCommand } from './orgs/ListInvitationsCommand.js';
import { LeaveOrgCommand } from './orgs/LeaveOrgCommand.js';
import { ListMembersCommand } from './orgs/ListMembersCommand.js';
import { ListOrgsCommand } from './orgs/ListOrgsCommand.js';
import { RemoveMemberCommand } from './orgs/RemoveMemberCommand.js';
import { RenameOrgCommand } from './orgs/RenameOrgCommand.js';
import { SetMemberRoleCommand } from './orgs/SetMemberRoleCommand.js';
import { ShowOrgCommand } from './orgs/ShowOrgCommand.js';
import { ReposCommand } from './repos/ReposCommand.js';
import { CreateVineyardCommand } from './vineyards/CreateVineyardCommand.js';
import { DeleteVineyardCommand } from './vineyards/DeleteVineyardCommand.js';
import { RenameVineyardCommand } from './vineyards/RenameVineyardCommand.js';
import { ListVineyardsCommand } from './vineyards/ListVineyardsCommand.js';
import { ShowVineyardCommand } from './vineyards/ShowVineyardCommand.js';
import { CreateNotificationCommand } from './notifications/CreateNotificationCommand.js';
import { DeleteNotificationCommand } from './notifications/DeleteNotificationCommand.js';
import { ListDeliveriesCommand } from './notifications/ListDeliveriesCommand.js';
import { ListNotificationsCommand } from './notifications/ListNotificationsCommand.js';
import { ShowNotificationCommand } from './notifications/ShowNotificationCommand.js';
import { TestNotificationCommand } from './notifications/TestNotificationCommand.js';
import { DeleteModuleCommand } from './modules/DeleteModuleCommand.js';
import { DeprecateModuleCommand } from './modules/DeprecateModuleCommand.js';
import { ListModulesCommand } from './modules/ListModulesCommand.js';
import { ModuleUsageCommand } from './modules/ModuleUsageCommand.js';
import { ModuleVersionsCommand } from './modules/ModuleVersionsCommand.js';
import { ConnectModuleCommand } from './modules/ConnectModuleCommand.js';
import { ModuleRepositoryCommand } from './modules/ModuleRepositoryCommand.js';
import { PublishModuleCommand } from './modules/PublishModuleCommand.js';
import { CreatePolicyCommand } from './policies/CreatePolicyCommand.js';
import { DeletePolicyCommand } from './policies/DeletePolicyCommand.js';
import { ListPoliciesCommand } from './policies/ListPoliciesCommand.js';
import { ShowPolicyCommand } from './policies/ShowPolicyCommand.js';
import { UpdatePolicyCommand } from './policies/UpdatePolicyCommand.js';
import { CreateTokenCommand } from './tokens/CreateTokenCommand.js';
import { ListTokensCommand } from './tokens/ListTokensCommand.js';
import { RevokeTokenCommand } from './tokens/RevokeTokenCommand.js';
import { WhoamiCommand } from './WhoamiCommand.js';
import { ListMirrorCommand } from './mirror/ListMirrorCommand.js';
import { PushMirrorCommand } from './mirror/PushMirrorCommand.js';
import { DeleteProviderVersionCommand } from './providers/DeleteProviderVersionCommand.js';
import { AddGpgKeyCommand, DeleteGpgKeyCommand, ListGpgKeysCommand } from './providers/GpgKeyCommands.js';
import { ListProvidersCommand } from './providers/ListProvidersCommand.js';
import { ProviderVersionsCommand } from './providers/ProviderVersionsCommand.js';
import { PublishProviderCommand } from './providers/PublishProviderCommand.js';
import { ListWorkersCommand } from './workers/ListWorkersCommand.js';
import { RegisterWorkerCommand } from './workers/RegisterWorkerCommand.js';
import { ShowWorkerCommand } from './workers/ShowWorkerCommand.js';

/** Every command of `trellis`, registered in this order (the help command first: it is the default). */
export const COMMANDS = [
  HelpCommand,
  LoginCommand,
  LogoutCommand,
  WhoamiCommand,
  ListVineyardsCommand,
  CreateVineyardCommand,
  ShowVineyardCommand,
  RenameVineyardCommand,
  DeleteVineyardCommand,
  ListConfigsCommand,
  ShowConfigCommand,
  CreateConfigCommand,
  UpdateConfigCommand,
  SetConfigCommand,
  DeleteConfigCommand,
  ListStateCommand,
  PullStateCommand,
  RollbackStateCommand,
  UnlockStateCommand,
  AcknowledgeStateCommand,
  DriftCheckCommand,
  ConnectConfigCommand,
  DisconnectConfigCommand,
  PlanCommand,
  DeployCommand,
  DestroyCommand,
  ApprovePlanCommand,
  RejectPlanCommand,
  OverridePlanCommand,
  ListJobsCommand,
  QueueCommand,
  ShowJobCommand,
  PlanChangesCommand,
  JobLogsCommand,
  CancelJobCommand,
  WaitJobCommand,
  ListWorkersCommand,
  ShowWorkerCommand,
  RegisterWorkerCommand,
  ListTokensCommand,
  CreateTokenCommand,
  RevokeTokenCommand,
  ListNotificationsCommand,
  CreateNotificationCommand,
  ShowNotificationCommand,
  DeleteNotificationCommand,
  TestNotificationCommand,
  ListPoliciesCommand,
  CreatePolicyCommand,
  ShowPolicyCommand,
  UpdatePolicyCommand,
  DeletePolicyCommand,
  ListDeliveriesCommand,
  ListOrgsCommand,
  CreateOrgCommand,
  ShowOrgCommand,
  RenameOrgCommand,
  DeleteOrgCommand,
  ListMembersCommand,
  AddMemberCommand,
  SetMemberRoleCommand,
  RemoveMemberCommand,
  LeaveOrgCommand,
  ListInvitationsCommand,
  AcceptInvitationCommand,
  DeclineInvitationCommand,
  AuditCommand,
  ReposCommand,
  PushMirrorCommand,
  ListMirrorCommand,
  ListModulesCommand,
  PublishModuleCommand,
  ModuleVersionsCommand,
  ModuleUsageCommand,
  ConnectModuleCommand,
  ModuleRepositoryCommand,
  DeprecateModuleCommand,
  DeleteModuleCommand,
  ListProvidersCommand,
  ProviderVersionsCommand,
  PublishProviderCommand,
  DeleteProviderVersionCommand,
  ListGpgKeysCommand,
  AddGpgKeyCommand,
  DeleteGpgKeyCommand,
] as const;
