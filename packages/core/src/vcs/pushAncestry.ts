/**
 * Replayed pushes (issue 23). A webhook's delivery id is not signed, so an old signed push can be
 * sent again under a new id (its body is recognized while its hash is remembered, not after).
 * `auto_deploy` therefore deploys a push's commit only when the provider's compare API says it is
 * newer than the newest commit the vine deployed, is deploying, or heard of in an earlier checked
 * push; and only while no deploy of a newer plan went (or goes) first.
 */
import { isDomainError } from '../domain/errors.js';
import type { JobStatus } from '../domain/enums.js';
import type { Job, JobSummary, SourceSummary } from '../domain/records.js';
import type { PushAncestry, VcsConnection } from '../domain/vcs.js';
import type { VcsApi } from '../ports/VcsApi.js';
import { ownerScope, type Stores, systemScope } from '../ports/UnitOfWork.js';
import type { CoreDeps } from '../usecases/CoreDeps.js';
import { vcsTokenFor } from '../usecases/vcsTokens.js';

/** How far back (in jobs of the vine, newest first) the rules look. */
const WALK_LIMIT = 1000;
const PAGE = 100;

/** A DEPLOY in one of these changes (or changed) the infrastructure to its commit. */
const DEPLOYING: readonly JobStatus[] = ['QUEUED', 'PROCESSING', 'SUCCESS'];

/** The vine's jobs, newest first, at most `WALK_LIMIT`, until `stop` says enough. */
async function walkJobs(
  stores: Pick<Stores, 'jobs'>,
  ownerId: string,
  vineId: string,
  stop: (job: JobSummary) => boolean,
): Promise<void> {
  let seen = 0;
  let after: { at: string; seq: number } | undefined;
  while (seen < WALK_LIMIT) {
    const page = await stores.jobs.page(ownerId, after ? { limit: PAGE, after } : { limit: PAGE }, { vine_id: vineId });
    for (const job of page.items) {
      seen += 1;
      if (stop(job)) return;
    }
    if (page.next === null) return;
    after = page.next;
  }
}

function commitOn(source: SourceSummary | null, branch: string): string | null {
  return source?.type === 'git' && source.ref === branch ? (source.commit ?? null) : null;
}

/**
 * The newest commit of `branch` the vine deployed, is deploying (a DEPLOY queued, running or
 * succeeded, at a pinned commit), or heard of in an earlier push checked newer; null when none.
 */
export async function newestKnownCommit(
  stores: Pick<Stores, 'jobs'>,
  ownerId: string,
  vineId: string,
  branch: string,
): Promise<string | null> {
  let found: string | null = null;
  await walkJobs(stores, ownerId, vineId, (job) => {
    const commit = commitOn(job.config_snapshot.source, branch);
    if (commit === null) return false;
    const deploying = job.job_type === 'DEPLOY' && DEPLOYING.includes(job.status);
    const checkedPush = job.trigger.type === 'push' && job.trigger.ancestry === 'newer';
    if (deploying || checkedPush) found = commit;
    return found !== null;
  });
  return found;
}

/** A push's commit checked against the vine's newest known commit (`base`, null: none). */
export interface CheckedPush {
  ancestry: PushAncestry;
  base: string | null;
}

/**
 * Whether `commit`, pushed to the connection's branch, is newer than the vine's newest known
 * commit, by the provider's compare API with the connecting person's token. The first push of a
 * vine with none is newer; the same commit again is not; a provider that cannot answer is
 * `unknown` (the plan runs, and is not deployed by itself).
 */
export async function checkPushAncestry(
  deps: CoreDeps,
  api: VcsApi,
  connection: VcsConnection,
  commit: string,
): Promise<CheckedPush> {
  const base = await deps.uow.read(ownerScope(connection.owner_id), (stores) =>
    newestKnownCommit(stores, connection.owner_id, connection.vine_id, connection.branch),
  );
  if (base === null) return { ancestry: 'newer', base };
  if (base === commit) return { ancestry: 'not_newer', base };
  try {
    const token = await deps.uow.run(systemScope, (stores) => vcsTokenFor(stores, deps, connection));
    const relation = await api.compareCommits(token, connection.repository, base, commit);
    return { ancestry: relation === 'ahead' ? 'newer' : 'not_newer', base };
  } catch (error) {
    if (isDomainError(error)) return { ancestry: 'unknown', base };
    throw error;
  }
}

/** The `SYSTEM` line a push plan that auto-deploy will not deploy gets in its log. */
export function ancestryNote(checked: CheckedPush, commit: string): string | null {
  switch (checked.ancestry) {
    case 'newer':
      return null;
    case 'not_newer':
      return `trellis: auto-deploy will not deploy this plan: commit ${commit} is not newer than ${checked.base} (the newest commit this vine deployed or planned from a push); deploy it by hand if it should be\n`;
    case 'unknown':
      return `trellis: auto-deploy will not deploy this plan: the provider could not say whether commit ${commit} is newer than ${checked.base}; deploy it by hand if it should be\n`;
    default: {
      const unknown: never = checked.ancestry;
      throw new Error(`unknown ancestry ${String(unknown)}`);
    }
  }
}

/**
 * Whether auto-deploy may deploy `plan`, a push's successful PLAN (in the unit of work that would
 * queue its DEPLOY; no provider call): its commit was checked newer when the push came, and no
 * DEPLOY of a plan queued after it (or a DEPLOY without a plan queued after it) is queued, running
 * or done, so deploys never go back to an older commit.
 */
export async function pushMayAutoDeploy(stores: Pick<Stores, 'jobs'>, plan: Job): Promise<boolean> {
  if (plan.trigger.type !== 'push' || plan.trigger.ancestry !== 'newer' || plan.vine_id === null) return false;
  const newer: JobSummary[] = [];
  let reached = false;
  await walkJobs(stores, plan.owner_id, plan.vine_id, (job) => {
    if (job.id === plan.id) reached = true;
    else newer.push(job);
    return reached;
  });
  if (!reached) return false;
  const newerIds = new Set(newer.map((job) => job.id));
  return !newer.some(
    (job) =>
      job.job_type === 'DEPLOY' &&
      DEPLOYING.includes(job.status) &&
      (job.plan_job_id === null || newerIds.has(job.plan_job_id)),
  );
}
