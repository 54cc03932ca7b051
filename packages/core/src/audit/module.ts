import type { CoreModule } from '../modules/CoreModule.js';
import { useCase } from '../modules/CoreModule.js';
import { coreServices, serviceRef } from '../tokens.js';
import { AuditUseCases } from './AuditUseCases.js';

/** The audit log (issue 14); its retention task is `auditTasks.ts`. */
export const auditServices = {
  audit: serviceRef<AuditUseCases>('trellis.audit.audit'),
} as const;

export const auditModule: CoreModule = {
  name: 'audit',
  useCases: [useCase('audit', auditServices.audit, (get) => new AuditUseCases(get(coreServices.deps)))],
};
