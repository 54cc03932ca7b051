import type { UserActor } from '../../domain/actors.js';
import type { CoreDeps } from '../../usecases/CoreDeps.js';
import type { ModuleVersionAddress } from '../modules/records.js';
import type { RegistryModuleUseCases } from '../modules/RegistryModuleUseCases.js';
import { describeModule, isDescribedFile, MAX_DESCRIBED_FILE_BYTES, type ModuleDescription } from './describeModule.js';

/**
 * A published version's documentation for the registry page (issue 28): its README, inputs and
 * outputs, read from its own tarball (the root `*.tf` files and README) each time it is asked
 * for, so what the page shows is what `tofu init` downloads. Needs `registry.read`.
 */
export class ModuleDocsUseCases {
  constructor(
    private readonly deps: Pick<CoreDeps, 'tarballs'>,
    private readonly modules: Pick<RegistryModuleUseCases, 'download' | 'openTarball'>,
  ) {}

  async describe(actor: UserActor, address: ModuleVersionAddress): Promise<ModuleDescription> {
    const { ownerId, versionId } = await this.modules.download(actor, address);
    const tarball = await this.modules.openTarball(ownerId, versionId);
    const files = await this.deps.tarballs.readFiles(tarball.body, {
      stripComponents: 0,
      select: isDescribedFile,
      maxFileBytes: MAX_DESCRIBED_FILE_BYTES,
    });
    return describeModule(files);
  }
}
