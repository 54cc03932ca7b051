import type { ConfigurationVersionUseCases } from '../configurationVersions/ConfigurationVersionUseCases.js';
import type { ApiTokenUseCases } from '../tokens/ApiTokenUseCases.js';
import type { CoreDeps } from '../usecases/CoreDeps.js';
import type { PlanReviewUseCases } from '../policies/PlanReviewUseCases.js';
import { createTfeRunPhases, type TfeRunPhases } from './runs/phasesUseCases.js';
import { StateHistoryUseCases } from './StateHistoryUseCases.js';
import { TfeConfigurationVersionUseCases } from './TfeConfigurationVersionUseCases.js';
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
): TfeUseCases {
  const workspaces = new TfeWorkspaceUseCases(deps);
  const states = new TfeStateUseCases(deps, workspaces);
  return {
    login: new TfeLoginUseCases(deps, apiTokens),
    workspaces,
    locks: new TfeLockUseCases(deps, workspaces),
    states,
    variables: new TfeVariableUseCases(deps, workspaces),
    history: new StateHistoryUseCases(deps, states),
    runs: new TfeRunUseCases(deps, lifecycle, workspaces),
    runPhases: createTfeRunPhases(deps, reviews),
    configurationVersions: new TfeConfigurationVersionUseCases(deps, workspaces, versions),
  };
}
