import type { CoreModule } from '../modules/CoreModule.js';
import { useCase } from '../modules/CoreModule.js';
import { coreServices, serviceRef } from '../tokens.js';
import { VcsFeedbackUseCases } from '../usecases/vcsFeedback.js';
import { vcsFeedbackHooks } from '../usecases/vcsFeedbackHooks.js';
import { GitEventUseCases } from './GitEventUseCases.js';
import { autoDeployHooks } from './gitJobs.js';
import { RepositoryUseCases } from './RepositoryUseCases.js';
import { VcsUseCases } from './VcsUseCases.js';

/**
 * Git-driven runs (docs/git.md): connections, webhooks, the repositories a person may pick,
 * auto-deploy, and the feedback on commits (still in `usecases/vcsFeedback*.ts`).
 */
export const vcsServices = {
  vcs: serviceRef<VcsUseCases>('trellis.vcs.connections'),
  gitEvents: serviceRef<GitEventUseCases>('trellis.vcs.git-events'),
  repositories: serviceRef<RepositoryUseCases>('trellis.vcs.repositories'),
  vcsFeedback: serviceRef<VcsFeedbackUseCases>('trellis.vcs.feedback'),
} as const;

export const vcsModule: CoreModule = {
  name: 'vcs',
  useCases: [
    useCase('vcs', vcsServices.vcs, (get) => new VcsUseCases(get(coreServices.deps))),
    useCase(
      'gitEvents',
      vcsServices.gitEvents,
      (get) => new GitEventUseCases(get(coreServices.deps), get(coreServices.jobLifecycle)),
    ),
    useCase('repositories', vcsServices.repositories, (get) => new RepositoryUseCases(get(coreServices.deps))),
    useCase('vcsFeedback', vcsServices.vcsFeedback, (get) => new VcsFeedbackUseCases(get(coreServices.deps))),
  ],
  hooks: () => ({ report: vcsFeedbackHooks, follow: autoDeployHooks }),
};
