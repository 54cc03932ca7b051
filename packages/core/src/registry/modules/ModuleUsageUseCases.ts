import type { UserActor } from '../../domain/actors.js';
import type { ModuleUse } from '../../domain/jobResults.js';
import type { CoreDeps } from '../../usecases/CoreDeps.js';
import type { ModuleAddress } from './records.js';
import type { RegistryModuleUseCases } from './RegistryModuleUseCases.js';
import { compareSemVer } from './semver.js';

/** One vine whose last plan or deploy installed the module, and the version it installed. */
export interface ModuleUsageEntry {
  vine_id: string;
  vine_name: string;
  version: string;
  /** The job that reported it: the vine's newest succeeded PLAN or DEPLOY (not a pull request's plan). */
  job_id: string;
  job_type: 'PLAN' | 'DEPLOY';
  finished_at: string | null;
}

export interface ModuleUsage {
  namespace: string;
  name: string;
  system: string;
  /** By vine name, then version highest first. */
  vines: ModuleUsageEntry[];
}

/**
 * Which vines use which version of a module (issue 28): the vines of the namespace's owner whose
 * newest succeeded PLAN or DEPLOY reported (`execution_metadata.modules`, from its `init`) the
 * module, from any host (`<host>/<namespace>/<name>/<system>`, case-insensitive; a `//subdir` of
 * it counts). A pull request's plan runs another branch and is passed over; a vine whose last
 * plan no longer installs the module is not listed. Needs `registry.read`.
 */
export class ModuleUsageUseCases {
  constructor(
    private readonly deps: Pick<CoreDeps, 'uow'>,
    private readonly modules: Pick<RegistryModuleUseCases, 'find'>,
  ) {}

  async usage(actor: UserActor, address: ModuleAddress): Promise<ModuleUsage> {
    const { namespace, module } = await this.modules.find(actor, address, 'registry.read');
    const wanted = [namespace.name, module.name, module.system].map((part) => part.toLowerCase());
    const vines = await this.deps.uow.read(namespace.scope, async (stores) => {
      const names = new Map((await stores.vines.list(namespace.ownerId)).map((vine) => [vine.id, vine.name]));
      const entries: ModuleUsageEntry[] = [];
      for (const job of await stores.jobs.lastChangePerVine(namespace.ownerId)) {
        const vineName = names.get(job.vine_id as string);
        if (vineName === undefined) continue;
        const versions = new Set(
          (job.execution_metadata.modules ?? [])
            .filter((used) => namesModule(used, wanted))
            .map((used) => used.version),
        );
        for (const version of versions) {
          entries.push({
            vine_id: job.vine_id as string,
            vine_name: vineName,
            version,
            job_id: job.id,
            job_type: job.job_type as 'PLAN' | 'DEPLOY',
            finished_at: job.finished_at,
          });
        }
      }
      return entries;
    });
    vines.sort((a, b) => a.vine_name.localeCompare(b.vine_name) || compareSemVer(b.version, a.version));
    return { namespace: namespace.name, name: module.name, system: module.system, vines };
  }
}

/** Whether `used.source` is `<host>/<namespace>/<name>/<system>` (maybe with a `//subdir`) of the wanted module. */
function namesModule(used: ModuleUse, wanted: string[]): boolean {
  const parts = (used.source.split('//')[0] ?? '').toLowerCase().split('/');
  return parts.length === 4 && parts.slice(1).every((part, i) => part === wanted[i]);
}
