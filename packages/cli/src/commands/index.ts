import { AuditCommand } from './AuditCommand.js';
import { CreateConfigCommand } from './configs/CreateConfigCommand.js';
import { ListConfigsCommand } from './configs/ListConfigsCommand.js';
import { ShowConfigCommand } from './configs/ShowConfigCommand.js';
import { HelpCommand } from './HelpCommand.js';
import { CancelJobCommand } from './jobs/CancelJobCommand.js';
import { DeployCommand } from './jobs/DeployCommand.js';
import { DestroyCommand } from './jobs/DestroyCommand.js';
import { JobLogsCommand } from './jobs/JobLogsCommand.js';
import { ListJobsCommand } from './jobs/ListJobsCommand.js';
import { PlanCommand } from './jobs/PlanCommand.js';
import { ShowJobCommand } from './jobs/ShowJobCommand.js';
import { WaitJobCommand } from './jobs/WaitJobCommand.js';
import { LoginCommand } from './LoginCommand.js';
import { LogoutCommand } from './LogoutCommand.js';
import { AddMemberCommand } from './orgs/AddMemberCommand.js';
import { CreateOrgCommand } from './orgs/CreateOrgCommand.js';
import { ListMembersCommand } from './orgs/ListMembersCommand.js';
import { ListOrgsCommand } from './orgs/ListOrgsCommand.js';
import { RemoveMemberCommand } from './orgs/RemoveMemberCommand.js';
import { SetMemberRoleCommand } from './orgs/SetMemberRoleCommand.js';
import { ShowOrgCommand } from './orgs/ShowOrgCommand.js';
import { ReposCommand } from './repos/ReposCommand.js';
import { CreateVineyardCommand } from './vineyards/CreateVineyardCommand.js';
import { ListVineyardsCommand } from './vineyards/ListVineyardsCommand.js';
import { ShowVineyardCommand } from './vineyards/ShowVineyardCommand.js';
import { CreateTokenCommand } from './tokens/CreateTokenCommand.js';
import { ListTokensCommand } from './tokens/ListTokensCommand.js';
import { RevokeTokenCommand } from './tokens/RevokeTokenCommand.js';
import { WhoamiCommand } from './WhoamiCommand.js';
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
  ListConfigsCommand,
  ShowConfigCommand,
  CreateConfigCommand,
  PlanCommand,
  DeployCommand,
  DestroyCommand,
  ListJobsCommand,
  ShowJobCommand,
  JobLogsCommand,
  CancelJobCommand,
  WaitJobCommand,
  ListWorkersCommand,
  ShowWorkerCommand,
  RegisterWorkerCommand,
  ListTokensCommand,
  CreateTokenCommand,
  RevokeTokenCommand,
  ListOrgsCommand,
  CreateOrgCommand,
  ShowOrgCommand,
  ListMembersCommand,
  AddMemberCommand,
  SetMemberRoleCommand,
  RemoveMemberCommand,
  AuditCommand,
  ReposCommand,
] as const;
