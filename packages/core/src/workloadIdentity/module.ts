import type { CoreModule } from '../modules/CoreModule.js';
import { useCase } from '../modules/CoreModule.js';
import { coreServices, serviceRef } from '../tokens.js';
import { WorkloadIdentityUseCases } from './WorkloadIdentityUseCases.js';

/** The OIDC issuer of jobs' identity tokens (docs/workload-identity.md). */
export const workloadIdentityServices = {
  workloadIdentity: serviceRef<WorkloadIdentityUseCases>('trellis.workload-identity.workload-identity'),
} as const;

export const workloadIdentityModule: CoreModule = {
  name: 'workloadIdentity',
  useCases: [
    useCase(
      'workloadIdentity',
      workloadIdentityServices.workloadIdentity,
      (get) => new WorkloadIdentityUseCases(get(coreServices.deps)),
    ),
  ],
};
