import { verifiedArtifactBody } from '../artifacts/VerifiedBody.js';
import type { Vine } from '../domain/records.js';
import type { Scope } from '../ports/UnitOfWork.js';
import { readAll } from '../tfe/stateOutputs.js';
import type { CoreDeps } from '../usecases/CoreDeps.js';

/**
 * How many resources the vine's latest state manages: resources of mode `managed` with at least
 * one instance (data sources are read, never created, so nothing is left behind without them).
 * A state that cannot be read counts as managing something: deleting it is not to be done blind.
 */
export async function managedResourceCount(
  deps: Pick<CoreDeps, 'uow' | 'artifacts'>,
  scope: Scope,
  vine: Vine,
): Promise<number> {
  const latest = await deps.uow.read(scope, (stores) => stores.states.latest(vine.owner_id, vine.id));
  if (!latest) return 0;
  try {
    const artifact = await deps.artifacts.get(latest.storage_key);
    const bytes = await readAll(verifiedArtifactBody(latest.storage_key, artifact.body, artifact.size, latest));
    const state = JSON.parse(bytes.toString('utf8')) as { resources?: unknown };
    if (!Array.isArray(state.resources)) return 0;
    return state.resources.filter(
      (resource: { mode?: unknown; instances?: unknown }) =>
        resource?.mode !== 'data' && Array.isArray(resource?.instances) && resource.instances.length > 0,
    ).length;
  } catch {
    return 1;
  }
}
