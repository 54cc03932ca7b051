import type { ApiTokenUseCases } from '../tokens/ApiTokenUseCases.js';
import type { CoreDeps } from '../usecases/CoreDeps.js';
import { StateHistoryUseCases } from './StateHistoryUseCases.js';
import { TfeLockUseCases } from './TfeLockUseCases.js';
import { TfeLoginUseCases } from './TfeLoginUseCases.js';
import { TfeStateUseCases } from './TfeStateUseCases.js';
import { TfeVariableUseCases } from './TfeVariableUseCases.js';
import { TfeWorkspaceUseCases } from './TfeWorkspaceUseCases.js';

/** The Terraform Cloud protocol's use cases (issue 26), and the state history of vines they share. */
export interface TfeUseCases {
  login: TfeLoginUseCases;
  workspaces: TfeWorkspaceUseCases;
  locks: TfeLockUseCases;
  states: TfeStateUseCases;
  variables: TfeVariableUseCases;
  history: StateHistoryUseCases;
}

export function createTfeUseCases(deps: CoreDeps, apiTokens: ApiTokenUseCases): TfeUseCases {
  const workspaces = new TfeWorkspaceUseCases(deps);
  const states = new TfeStateUseCases(deps, workspaces);
  return {
    login: new TfeLoginUseCases(deps, apiTokens),
    workspaces,
    locks: new TfeLockUseCases(deps, workspaces),
    states,
    variables: new TfeVariableUseCases(deps, workspaces),
    history: new StateHistoryUseCases(deps, states),
  };
}
