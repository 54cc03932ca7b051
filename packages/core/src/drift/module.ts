import type { CoreModule } from '../modules/CoreModule.js';
import { useCase } from '../modules/CoreModule.js';
import { coreServices, serviceRef } from '../tokens.js';
import { driftHooks, runTriggerHooks } from './driftHooks.js';
import { DriftUseCases } from './DriftUseCases.js';

/** Drift detection and run triggers (issue 16); the drift check task is `driftTasks.ts`. */
export const driftServices = {
  drift: serviceRef<DriftUseCases>('trellis.drift.drift'),
} as const;

export const driftModule: CoreModule = {
  name: 'drift',
  useCases: [
    useCase(
      'drift',
      driftServices.drift,
      (get) => new DriftUseCases(get(coreServices.deps), get(coreServices.jobLifecycle)),
    ),
  ],
  hooks: () => ({ report: driftHooks, follow: runTriggerHooks }),
};
