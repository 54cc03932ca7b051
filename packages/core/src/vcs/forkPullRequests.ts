/**
 * Pull requests from forks (issue 23). A fork's code is anyone's: planning it runs that code on
 * the owner's agent. What the connection's `fork_pull_requests` allows decides whether it is
 * planned, and with what; whatever it says, a pull request's plan only reads the vine's state
 * (`stateAccessOf`).
 */
import { isDomainError } from '../domain/errors.js';
import type { Job, Variables } from '../domain/records.js';
import type { VcsConnection, VcsEvent } from '../domain/vcs.js';
import type { VcsApi } from '../ports/VcsApi.js';
import { ownerScope, systemScope } from '../ports/UnitOfWork.js';
import type { CoreDeps } from '../usecases/CoreDeps.js';
import { vcsTokenFor } from '../usecases/vcsTokens.js';

type PullRequestEvent = Extract<VcsEvent, { kind: 'pull_request' }>;

/** What becomes of a pull request into the connected branch. */
export type PullRequestPlanning = 'plan' | 'plan_without_secrets' | 'ignore';

/** The repository's own pull requests are planned; a fork's as the connection's `fork_pull_requests` says. */
export function pullRequestPlanning(
  connection: Pick<VcsConnection, 'fork_pull_requests'>,
  event: Pick<PullRequestEvent, 'fork'>,
): PullRequestPlanning {
  if (!event.fork) return 'plan';
  const mode = connection.fork_pull_requests;
  switch (mode) {
    case 'off':
      return 'ignore';
    case 'without_secrets':
      return 'plan_without_secrets';
    case 'with_secrets':
      return 'plan';
    default: {
      const unknown: never = mode;
      throw new Error(`unknown fork_pull_requests mode ${String(unknown)}`);
    }
  }
}

/** Whether the job runs without the vine's secrets (a fork's pull request planned `without_secrets`). */
export function secretsWithheld(job: Pick<Job, 'trigger'>): boolean {
  return job.trigger.type === 'pull_request' && job.trigger.secrets_withheld === true;
}

/** The names of the sensitive variables, which a plan without secrets does not get. */
export function sensitiveVariableNames(variables: Variables): string[] {
  return Object.entries(variables)
    .filter(([, variable]) => variable.sensitive)
    .map(([name]) => name)
    .sort();
}

/**
 * The job as an agent may read it: a plan without secrets without its sensitive variables (they
 * are not given to the engine either: a required one without a default fails the plan, as it
 * should); every other job as it is.
 */
export function jobForAgent(job: Job): Job {
  if (!secretsWithheld(job)) return job;
  const snapshot = job.config_snapshot;
  const variables: Variables = {};
  for (const [name, variable] of Object.entries(snapshot.variables)) {
    if (!variable.sensitive) variables[name] = variable;
  }
  return { ...job, config_snapshot: { ...snapshot, variables } };
}

/** The `SYSTEM` line the claim of a plan without secrets writes to its log: what it does not get, and why. */
export function withheldSecretsNote(job: Job): string {
  const names = sensitiveVariableNames(job.config_snapshot.variables);
  const variables = names.length > 0 ? `sensitive variables (${names.join(', ')})` : 'sensitive variables';
  return (
    `trellis: this pull request comes from a fork and the connection plans forks without secrets: ` +
    `this plan gets no ${variables}, no cloud identity, no identity token and no clone credentials, ` +
    'and reads the state without locking or writing it\n'
  );
}

/** The description of the commit status an ignored fork pull request gets (GitHub keeps 140 characters). */
export const FORK_IGNORED_DESCRIPTION = 'Not planned: pull requests from forks are off for this vine';

/**
 * Leaves a `neutral` commit status on the head of a fork's pull request the connection does not
 * plan, saying why (best effort, with the connecting person's token: a provider that refuses or is
 * down changes nothing, the delivery is still accepted).
 */
export async function reportIgnoredForkPullRequest(
  deps: CoreDeps,
  api: VcsApi,
  connection: VcsConnection,
  headSha: string,
): Promise<void> {
  try {
    const names = await deps.uow.read(ownerScope(connection.owner_id), async (stores) => {
      const vine = await stores.vines.get(connection.owner_id, connection.vine_id);
      const vineyard = vine ? await stores.vineyards.get(vine.owner_id, vine.vineyard_id) : null;
      return vine ? { vine: vine.name, vineyard: vineyard?.name ?? vine.vineyard_id } : null;
    });
    if (names === null) return;
    const token = await deps.uow.run(systemScope, (stores) => vcsTokenFor(stores, deps, connection));
    const base = deps.settings.notifications.webUrl.replace(/\/+$/, '');
    await api.setCommitStatus(token, connection.repository, headSha, {
      state: 'neutral',
      context: `trellis/${names.vineyard}/${names.vine}`,
      description: FORK_IGNORED_DESCRIPTION,
      target_url: `${base}/configurations/${connection.vine_id}`,
    });
  } catch (error) {
    if (!isDomainError(error)) throw error;
  }
}
