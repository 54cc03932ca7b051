import type { ConfigSnapshot, Job, Variables, Vine } from '../domain/records.js';
import { pinnedCommitOf, snapshotOfVine, snapshotOfVineAt } from '../snapshot/configSnapshot.js';

/**
 * The configuration a plan would have if it were made of the vine as it is now (the stale-plan
 * guard compares its hash with the plan's), and what a DEPLOY or DESTROY of that plan runs:
 *
 * - a git-driven plan is of one commit: the vine now, at that commit;
 * - a remote run's plan (issue 27) is of the configuration version the CLI uploaded: the vine now
 *   with the plan's upload source, its run options and the values of the variables the run itself
 *   set (`run_options.variables`); a change of the vine's variables, engine or identity still
 *   makes it stale;
 * - a destroy plan compares as one (`destroy: true`).
 */
export function snapshotOfPlanNow(vine: Vine, plan: Pick<Job, 'config_snapshot'>): ConfigSnapshot {
  const planned = plan.config_snapshot;
  let now: ConfigSnapshot;
  if (planned.source?.type === 'upload') {
    const vineNow = snapshotOfVine(vine);
    const runVariables: Variables = {};
    for (const name of planned.run_options?.variables ?? []) {
      const value = planned.variables[name];
      if (value !== undefined) runVariables[name] = value;
    }
    now = {
      ...vineNow,
      source: planned.source,
      variables: { ...vineNow.variables, ...runVariables },
      ...(planned.run_options !== undefined ? { run_options: planned.run_options } : {}),
    };
  } else {
    const commit = pinnedCommitOf(planned);
    now = commit === null ? snapshotOfVine(vine) : snapshotOfVineAt(vine, commit);
    // A plan's run options (`trellis plan --target`) are part of what it planned.
    if (planned.run_options !== undefined) now = { ...now, run_options: planned.run_options };
  }
  if (planned.destroy === true) now = { ...now, destroy: true };
  return now;
}
