import type { ConfigurationVersionUseCases } from '../configurationVersions/ConfigurationVersionUseCases.js';
import type { ApiTokenUseCases } from '../tokens/ApiTokenUseCases.js';
import type { CoreDeps } from '../usecases/CoreDeps.js';
import type { PlanReviewUseCases } from '../policies/PlanReviewUseCases.js';
import { createTfeRunPhases, type TfeRunPhases } from './runs/phasesUseCases.js';
import { StateHistoryUseCases } from './StateHistoryUseCases.js';
import { configurationVersionId, TfeConfigurationVersionUseCases } from './TfeConfigurationVersionUseCases.js';
import { workspaceId } from './names.js';
import type { VineEditUseCases } from '../vineEdits/VineEditUseCases.js';
import { ownerScope } from '../ports/UnitOfWork.js';
import { TfeLockUseCases } from './TfeLockUseCases.js';
import { TfeLoginUseCases } from './TfeLoginUseCases.js';
import { TfeStateUseCases } from './TfeStateUseCases.js';
import { TfeVariableUseCases } from './TfeVariableUseCases.js';
import { TfeWorkspaceUseCases } from './TfeWorkspaceUseCases.js';
import type { JobLifecycle } from '../jobs/JobLifecycle.js';
import { TfeRunUseCases } from './runs/TfeRunUseCases.js';

/** The Terraform Cloud protocol's use cases (issue 26), and the state history of vines they share. */
export interface TfeUseCases {
  login: TfeLoginUseCases;
  workspaces: TfeWorkspaceUseCases;
  locks: TfeLockUseCases;
  states: TfeStateUseCases;
  variables: TfeVariableUseCases;
  history: StateHistoryUseCases;
  /** Remote runs (issue 27). */
  runs: TfeRunUseCases;
  /** A run's phases, logs, policy checks and the queue (issue 27). */
  runPhases: TfeRunPhases;
  configurationVersions: TfeConfigurationVersionUseCases;
}

export function createTfeUseCases(
  deps: CoreDeps,
  apiTokens: ApiTokenUseCases,
  lifecycle: JobLifecycle,
  reviews: PlanReviewUseCases,
  versions: ConfigurationVersionUseCases,
  vineEdits?: VineEditUseCases,
): TfeUseCases {
  const workspaces = new TfeWorkspaceUseCases(deps, vineEdits);
  const states = new TfeStateUseCases(deps, workspaces);
  const runs = new TfeRunUseCases(deps, lifecycle, workspaces);
  const uploads = new TfeConfigurationVersionUseCases(deps, workspaces, versions);
  // An upload that said `auto-queue-runs` (HCP's default; the CLI says false) queues its run as
  // the person who made the version, with the role they have now.
  uploads.onAutoQueue(async (version, { userId }) => {
    const user = await deps.uow.read(ownerScope(userId), (stores) => stores.users.get(userId));
    if (!user) return;
    await runs.create(
      { userId: user.id, email: user.email },
      {
        workspace_id: workspaceId(version.vine_id),
        configuration_version_id: configurationVersionId(version.id),
        attributes: {},
      },
    );
  });
  return {
    login: new TfeLoginUseCases(deps, apiTokens),
    workspaces,
    locks: new TfeLockUseCases(deps, workspaces),
    states,
    variables: new TfeVariableUseCases(deps, workspaces),
    history: new StateHistoryUseCases(deps, states),
    runs,
    runPhases: createTfeRunPhases(deps, reviews),
    configurationVersions: uploads,
  };
}
